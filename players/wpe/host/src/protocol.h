/*
 * The control channel: JSON lines in (commands), JSON lines out (events and replies). Either the
 * process's stdin/stdout or one client of a Unix socket the host listens on (--control-socket,
 * for when WPEWebDriver starts the host and owns its stdio).
 */
#ifndef WPE_HOST_PROTOCOL_H
#define WPE_HOST_PROTOCOL_H

#include <glib.h>
#include <json-glib/json-glib.h>

typedef struct Protocol Protocol;

/* One complete line arrived (without its newline). */
typedef void (*ProtocolLineFunc)(const char *line, gpointer data);
/* The peer went away (stdin's EOF, the socket client's hang-up). */
typedef void (*ProtocolClosedFunc)(gpointer data);

/*
 * Takes stdin and stdout for the protocol: both are moved to private close-on-exec descriptors,
 * and fds 0 and 1 then point at /dev/null and stderr, so that nothing WebKit, GStreamer or a
 * child process prints can corrupt the event stream. Call it before anything starts a process.
 */
Protocol *protocol_new_stdio(ProtocolLineFunc on_line, ProtocolClosedFunc on_closed, gpointer data,
                             GError **error);

/*
 * Listens on a Unix socket at `path` and serves its first client; events written before the
 * client connects are kept and sent to it when it does.
 */
Protocol *protocol_new_socket(const char *path, ProtocolLineFunc on_line, ProtocolClosedFunc on_closed,
                              gpointer data, GError **error);

/* Writes one JSON object as a line. */
void protocol_send(Protocol *protocol, JsonObject *object);

void protocol_free(Protocol *protocol);

#endif
