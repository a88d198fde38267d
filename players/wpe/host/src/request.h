/*
 * One command being answered, and its arguments. A command's handler owns its Request and
 * finishes it exactly once, with request_reply (or request_ok / request_fail), which frees it.
 * Each arg_* check that fails has already replied with an error and returns FALSE: the handler
 * then just returns.
 */
#ifndef WPE_HOST_REQUEST_H
#define WPE_HOST_REQUEST_H

#include "host.h"

typedef struct {
    Host *host;
    JsonObject *args;
    JsonNode *id;
} Request;

/* A request for the command object `args` (its "id", if any, is echoed in the reply). */
Request *request_new(Host *host, JsonObject *args);

/* Emits the reply `event` with `fields` (owned; may be NULL) and the command's id, and frees the request. */
void request_reply(Request *request, const char *event, JsonObject *fields);
void request_ok(Request *request, JsonObject *fields);
G_GNUC_PRINTF(2, 3) void request_fail(Request *request, const char *format, ...);

/* The member `name`, or NULL when absent. */
JsonNode *request_member(Request *request, const char *name);
gboolean is_null(JsonNode *node);

/* A string (NULL when absent and not required). */
gboolean arg_string(Request *request, const char *name, gboolean required, const char **out);
/* An integer in [min, max], `fallback` when absent. */
gboolean arg_int(Request *request, const char *name, gint64 fallback, gint64 min, gint64 max, int *out);
/* A number in [min, max], `fallback` when absent. */
gboolean arg_number(Request *request, const char *name, double fallback, double min, double max, double *out);
gboolean arg_bool(Request *request, const char *name, gboolean fallback, gboolean *out);
/* "viewId", naming a live view. */
gboolean arg_view(Request *request, HostView **out);
/* "world": "page" (NULL, the page's own) or "host" (HOST_WORLD, the isolated one). */
gboolean arg_world(Request *request, const char *fallback, const char **world);
/* x, y, width and height, each defaulting to what the pointers hold. */
gboolean arg_rect(Request *request, int *x, int *y, int *width, int *height);

#endif
