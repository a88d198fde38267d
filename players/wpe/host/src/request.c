#include "request.h"

#include "view.h"

#include <math.h>
#include <string.h>

/* Limits on what a command may ask for. */
#define MAX_COORDINATE 16384

static void request_free(Request *request)
{
    json_object_unref(request->args);
    if (request->id)
        json_node_unref(request->id);
    g_free(request);
}

Request *request_new(Host *host, JsonObject *args)
{
    Request *request = g_new0(Request, 1);
    request->host = host;
    request->args = json_object_ref(args);
    if (json_object_has_member(args, "id"))
        request->id = json_node_copy(json_object_get_member(args, "id"));
    return request;
}

void request_reply(Request *request, const char *event, JsonObject *fields)
{
    if (!fields)
        fields = json_object_new();
    if (request->id)
        json_object_set_member(fields, "id", json_node_copy(request->id));
    host_emit(request->host, event, fields);
    request_free(request);
}

void request_ok(Request *request, JsonObject *fields)
{
    request_reply(request, "ok", fields);
}

void request_fail(Request *request, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    char *message = g_strdup_vprintf(format, arguments);
    va_end(arguments);
    JsonObject *fields = json_object_new();
    json_object_set_string_member(fields, "message", message);
    g_free(message);
    request_reply(request, "error", fields);
}

JsonNode *request_member(Request *request, const char *name)
{
    return json_object_has_member(request->args, name) ? json_object_get_member(request->args, name) : NULL;
}

gboolean is_null(JsonNode *node)
{
    return !node || JSON_NODE_HOLDS_NULL(node);
}

gboolean arg_string(Request *request, const char *name, gboolean required, const char **out)
{
    JsonNode *node = request_member(request, name);
    if (is_null(node)) {
        if (required) {
            request_fail(request, "missing \"%s\"", name);
            return FALSE;
        }
        *out = NULL;
        return TRUE;
    }
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_STRING) {
        request_fail(request, "\"%s\" must be a string", name);
        return FALSE;
    }
    *out = json_node_get_string(node);
    return TRUE;
}

gboolean arg_int(Request *request, const char *name, gint64 fallback, gint64 min, gint64 max, int *out)
{
    JsonNode *node = request_member(request, name);
    gint64 value = fallback;
    if (!is_null(node)) {
        GType type = JSON_NODE_HOLDS_VALUE(node) ? json_node_get_value_type(node) : G_TYPE_INVALID;
        /* A JSON number with a fraction of zero (3.0) counts; the range check comes before any cast. */
        double number = type == G_TYPE_INT64 ? (double) json_node_get_int(node)
                        : type == G_TYPE_DOUBLE ? json_node_get_double(node)
                                                : NAN;
        if (!isfinite(number) || number != floor(number)) {
            request_fail(request, "\"%s\" must be an integer", name);
            return FALSE;
        }
        if (number < (double) min || number > (double) max) {
            request_fail(request, "\"%s\" must be between %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT, name, min,
                         max);
            return FALSE;
        }
        value = type == G_TYPE_INT64 ? json_node_get_int(node) : (gint64) number;
    }
    *out = (int) value;
    return TRUE;
}

gboolean arg_number(Request *request, const char *name, double fallback, double min, double max, double *out)
{
    JsonNode *node = request_member(request, name);
    *out = fallback;
    if (is_null(node))
        return TRUE;
    GType type = JSON_NODE_HOLDS_VALUE(node) ? json_node_get_value_type(node) : G_TYPE_INVALID;
    if (type != G_TYPE_INT64 && type != G_TYPE_DOUBLE) {
        request_fail(request, "\"%s\" must be a number", name);
        return FALSE;
    }
    *out = type == G_TYPE_INT64 ? (double) json_node_get_int(node) : json_node_get_double(node);
    if (!(*out >= min && *out <= max)) {
        request_fail(request, "\"%s\" must be between %g and %g", name, min, max);
        return FALSE;
    }
    return TRUE;
}

gboolean arg_bool(Request *request, const char *name, gboolean fallback, gboolean *out)
{
    JsonNode *node = request_member(request, name);
    *out = fallback;
    if (is_null(node))
        return TRUE;
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_BOOLEAN) {
        request_fail(request, "\"%s\" must be true or false", name);
        return FALSE;
    }
    *out = json_node_get_boolean(node);
    return TRUE;
}

gboolean arg_view(Request *request, HostView **out)
{
    const char *id;
    if (!arg_string(request, "viewId", TRUE, &id))
        return FALSE;
    *out = host_view(request->host, id);
    if (!*out) {
        request_fail(request, "no view \"%s\"", id);
        return FALSE;
    }
    return TRUE;
}

gboolean arg_world(Request *request, const char *fallback, const char **world)
{
    const char *name;
    if (!arg_string(request, "world", FALSE, &name))
        return FALSE;
    name = name ? name : fallback;
    if (strcmp(name, "page") == 0) {
        *world = NULL;
    } else if (strcmp(name, "host") == 0) {
        *world = HOST_WORLD;
    } else {
        request_fail(request, "\"world\" must be \"page\" or \"host\"");
        return FALSE;
    }
    return TRUE;
}

gboolean arg_rect(Request *request, int *x, int *y, int *width, int *height)
{
    return arg_int(request, "x", *x, -MAX_COORDINATE, MAX_COORDINATE, x)
           && arg_int(request, "y", *y, -MAX_COORDINATE, MAX_COORDINATE, y)
           && arg_int(request, "width", *width, 1, MAX_COORDINATE, width)
           && arg_int(request, "height", *height, 1, MAX_COORDINATE, height);
}
