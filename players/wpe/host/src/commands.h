/*
 * The control protocol's commands: one JSON object per line, {"cmd": NAME, "id": ANY, ...}.
 * Every command gets exactly one reply carrying its "id": "ok" (with the command's results),
 * "error", or the command's own reply (js-result/js-error, screenshot-written, view-destroyed).
 * A line that is not a command gets an "error" (with the id when it had one). README.md lists
 * every command and event.
 */
#ifndef WPE_HOST_COMMANDS_H
#define WPE_HOST_COMMANDS_H

#include "host.h"

/* Parses one line (NULL: a line too long to read) and runs the command. */
void commands_handle_line(Host *host, const char *line);

#endif
