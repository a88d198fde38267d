#include "commands.h"

#include "compositor.h"
#include "request.h"
#include "keys.h"
#include "video.h"
#include "view.h"

#include <string.h>

/* The longest view id; the latest start a video may be asked to play from (seconds). */
#define MAX_VIEW_ID 200
#define MAX_VIDEO_START (1000.0 * 3600)

/* ---- create-view ---- */

static gboolean valid_handler_name(const char *name)
{
    if (!name[0] || strcmp(name, "host") == 0 || strcmp(name, "hostKeys") == 0)
        return FALSE;
    for (const char *c = name; *c; c++) {
        if (!g_ascii_isalnum(*c) && *c != '_' && *c != '$')
            return FALSE;
    }
    return TRUE;
}

static gboolean read_handlers(Request *request, GStrv *handlers)
{
    JsonNode *node = request_member(request, "handlers");
    *handlers = NULL;
    if (is_null(node))
        return TRUE;
    if (!JSON_NODE_HOLDS_ARRAY(node)) {
        request_fail(request, "\"handlers\" must be an array of names");
        return FALSE;
    }
    JsonArray *array = json_node_get_array(node);
    GStrvBuilder *builder = g_strv_builder_new();
    for (guint i = 0; i < json_array_get_length(array); i++) {
        JsonNode *item = json_array_get_element(array, i);
        const char *name = JSON_NODE_HOLDS_VALUE(item) && json_node_get_value_type(item) == G_TYPE_STRING
                               ? json_node_get_string(item)
                               : NULL;
        if (!name || !valid_handler_name(name)) {
            g_strv_builder_unref(builder);
            request_fail(request, "handler names are letters, digits, _ and $ (and not host or hostKeys)");
            return FALSE;
        }
        g_strv_builder_add(builder, name);
    }
    *handlers = g_strv_builder_end(builder);
    g_strv_builder_unref(builder);
    return TRUE;
}

static const char *script_option(JsonObject *script, const char *name, const char *fallback)
{
    JsonNode *node = json_object_has_member(script, name) ? json_object_get_member(script, name) : NULL;
    if (!node)
        return fallback;
    return JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_STRING ? json_node_get_string(node)
                                                                                          : "";
}

/*
 * "scripts": [{"file": PATH | "source": TEXT, "world": "host" | "page", "frames": "all" | "top",
 * "at": "start" | "end"}]: user scripts, by default in the host's isolated world, in every frame,
 * at document start.
 */
static gboolean read_scripts(Request *request, GPtrArray **scripts)
{
    JsonNode *node = request_member(request, "scripts");
    *scripts = g_ptr_array_new_with_free_func((GDestroyNotify) webkit_user_script_unref);
    if (is_null(node))
        return TRUE;
    if (!JSON_NODE_HOLDS_ARRAY(node)) {
        request_fail(request, "\"scripts\" must be an array");
        return FALSE;
    }
    JsonArray *array = json_node_get_array(node);
    for (guint i = 0; i < json_array_get_length(array); i++) {
        JsonNode *item = json_array_get_element(array, i);
        if (!JSON_NODE_HOLDS_OBJECT(item)) {
            request_fail(request, "scripts[%u] must be an object", i);
            return FALSE;
        }
        JsonObject *script = json_node_get_object(item);
        const char *file = script_option(script, "file", NULL);
        const char *inline_source = script_option(script, "source", NULL);
        const char *world = script_option(script, "world", "host");
        const char *frames = script_option(script, "frames", "all");
        const char *at = script_option(script, "at", "start");
        if ((file == NULL) == (inline_source == NULL) || (strcmp(world, "host") && strcmp(world, "page"))
            || (strcmp(frames, "all") && strcmp(frames, "top")) || (strcmp(at, "start") && strcmp(at, "end"))) {
            request_fail(request, "scripts[%u]: one of \"file\" or \"source\"; world host|page, frames all|top, "
                                  "at start|end", i);
            return FALSE;
        }
        char *source = NULL;
        GError *error = NULL;
        if (file && !g_file_get_contents(file, &source, NULL, &error)) {
            request_fail(request, "scripts[%u]: %s", i, error->message);
            g_error_free(error);
            return FALSE;
        }
        WebKitUserScript *user_script = webkit_user_script_new_for_world(
            source ? source : inline_source,
            strcmp(frames, "top") == 0 ? WEBKIT_USER_CONTENT_INJECT_TOP_FRAME : WEBKIT_USER_CONTENT_INJECT_ALL_FRAMES,
            strcmp(at, "end") == 0 ? WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_END
                                   : WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_START,
            strcmp(world, "host") == 0 ? HOST_WORLD : NULL, NULL, NULL);
        g_free(source);
        g_ptr_array_add(*scripts, user_script);
    }
    return TRUE;
}

static void run_create_view(Request *request)
{
    Host *host = request->host;
    const char *id, *kind_name, *url, *background;
    ViewOptions options = { .x = 0, .y = 0, .width = host->width, .height = host->height };
    if (!arg_string(request, "viewId", TRUE, &id) || !arg_string(request, "kind", FALSE, &kind_name)
        || !arg_string(request, "url", FALSE, &url) || !arg_string(request, "background", FALSE, &background)
        || !arg_rect(request, &options.x, &options.y, &options.width, &options.height)
        || !arg_int(request, "z", 0, G_MININT32 / 2, G_MAXINT32 / 2, &options.z)
        || !arg_bool(request, "visible", FALSE, &options.visible))
        return;
    if (!id[0] || strlen(id) > MAX_VIEW_ID) {
        request_fail(request, "\"viewId\" must have 1 to %d characters", MAX_VIEW_ID);
        return;
    }
    if (host_view(host, id)) {
        request_fail(request, "a view \"%s\" exists already", id);
        return;
    }
    if (kind_name && !view_kind_parse(kind_name, &options.kind)) {
        request_fail(request, "\"kind\" must be \"overlay\" or \"tv\"");
        return;
    }
    if (!webkit_color_parse(&options.background, background ? background : "rgba(0,0,0,0)")) {
        request_fail(request, "\"background\" is not a CSS colour");
        return;
    }
    if (!read_handlers(request, &options.handlers))
        return;
    if (!read_scripts(request, &options.scripts)) {
        g_strfreev(options.handlers);
        g_ptr_array_unref(options.scripts);
        return;
    }
    options.controlled_by_automation = host->automation;
    HostView *view = view_new(host, id, &options);
    g_strfreev(options.handlers);
    g_ptr_array_unref(options.scripts);
    g_ptr_array_add(host->views, view);
    g_hash_table_insert(host->by_id, view->id, view);
    if (url)
        view_navigate(view, url);
    host_damage(host);
    request_ok(request, view_fields(view));
}

/* ---- the others ---- */

static void run_navigate(Request *request)
{
    HostView *view;
    const char *url;
    if (!arg_view(request, &view) || !arg_string(request, "url", TRUE, &url))
        return;
    view_navigate(view, url);
    request_ok(request, view_fields(view));
}

static void run_set_rect(Request *request)
{
    HostView *view;
    if (!arg_view(request, &view))
        return;
    int x = view->x, y = view->y, width = view->width, height = view->height;
    if (!arg_rect(request, &x, &y, &width, &height))
        return;
    view_set_rect(view, x, y, width, height);
    host_damage(request->host);
    request_ok(request, view_describe(view));
}

static void set_visible(Request *request, gboolean visible)
{
    HostView *view;
    if (!arg_view(request, &view))
        return;
    view->visible = visible;
    host_damage(request->host);
    request_ok(request, view_fields(view));
}

static void run_show(Request *request)
{
    set_visible(request, TRUE);
}

static void run_hide(Request *request)
{
    set_visible(request, FALSE);
}

/* raise: above every other view; lower: under every other view (still above the video). */
static void restack(Request *request, gboolean to_top)
{
    HostView *view;
    if (!arg_view(request, &view))
        return;
    Host *host = request->host;
    int z = view->z;
    for (guint i = 0; i < host->views->len; i++) {
        HostView *other = g_ptr_array_index(host->views, i);
        if (other != view)
            z = to_top ? MAX(z, other->z + 1) : MIN(z, other->z - 1);
    }
    view->z = z;
    host_damage(host);
    JsonObject *fields = view_fields(view);
    json_object_set_int_member(fields, "z", z);
    request_ok(request, fields);
}

static void run_raise(Request *request)
{
    restack(request, TRUE);
}

static void run_lower(Request *request)
{
    restack(request, FALSE);
}

static void run_focus(Request *request)
{
    HostView *view = NULL;
    if (!is_null(request_member(request, "viewId")) && !arg_view(request, &view))
        return;
    host_focus(request->host, view);
    JsonObject *fields = json_object_new();
    if (view)
        json_object_set_string_member(fields, "viewId", view->id);
    else
        json_object_set_null_member(fields, "viewId");
    request_ok(request, fields);
}

/* A run-js call: its request, and whether it went to a world (the _in_world calls, and async). */
typedef struct {
    Request *request;
    gboolean in_world;
} ScriptCall;

/* The reply of run-js once WebKit has the script's value (an async body: once its promise settled). */
static void on_script_finished(GObject *source, GAsyncResult *result, gpointer data)
{
    ScriptCall *call = data;
    Request *request = call->request;
    WebKitWebView *web_view = WEBKIT_WEB_VIEW(source);
    GError *error = NULL;
    /* WebKit documents the _in_world finish for run_javascript_in_world and for async functions. */
    WebKitJavascriptResult *js_result = call->in_world
                                            ? webkit_web_view_run_javascript_in_world_finish(web_view, result, &error)
                                            : webkit_web_view_run_javascript_finish(web_view, result, &error);
    g_free(call);
    JsonObject *fields = json_object_new();
    json_object_set_string_member(fields, "viewId", json_object_get_string_member(request->args, "viewId"));
    if (!js_result) {
        json_object_set_string_member(fields, "message", error ? error->message : "no result");
        g_clear_error(&error);
        request_reply(request, "js-error", fields);
        return;
    }
    char *json = jsc_value_to_json(webkit_javascript_result_get_js_value(js_result), 0);
    JsonNode *value = json ? json_from_string(json, NULL) : NULL;
    g_free(json);
    webkit_javascript_result_unref(js_result);
    json_object_set_member(fields, "value", value ? value : json_node_new(JSON_NODE_NULL));
    request_reply(request, "js-result", fields);
}

/*
 * run-js {viewId, script, world?, async?}: the script's completion value, as JSON. With
 * "async": true the script is the body of an async function (it may await; its return value
 * is the result once the promise settles).
 */
static void run_run_js(Request *request)
{
    HostView *view;
    const char *script, *world;
    gboolean async;
    if (!arg_view(request, &view) || !arg_string(request, "script", TRUE, &script)
        || !arg_world(request, "page", &world) || !arg_bool(request, "async", FALSE, &async))
        return;
    ScriptCall *call = g_new0(ScriptCall, 1);
    call->request = request;
    call->in_world = async || world != NULL;
    /* A NULL world is the page's own (for the async call too). */
    if (async)
        webkit_web_view_run_async_javascript_function_in_world(view->web_view, script, NULL, world, NULL,
                                                               on_script_finished, call);
    else if (world)
        webkit_web_view_run_javascript_in_world(view->web_view, script, world, NULL, on_script_finished, call);
    else
        webkit_web_view_run_javascript(view->web_view, script, NULL, on_script_finished, call);
}

/*
 * settle {viewId, quietMs?, timeoutMs?}: replies once the view has rendered twice (two animation
 * frames) and then delivered no new frame for quietMs (default 150): what the page changed
 * before is then in its frame, painted tiles included (WebKit paints a resized or newly exposed
 * area over several frames). `settled` is false when frames kept coming for timeoutMs
 * (default 5000; an animated page never settles).
 */
typedef struct {
    Request *request;
    char *view_id;
    gint64 quiet;
    gint64 deadline;
    gint64 rendered;
    guint64 frames;
} Settle;

static void settle_free(Settle *settle)
{
    g_free(settle->view_id);
    g_free(settle);
}

static gboolean settle_check(gpointer data)
{
    Settle *settle = data;
    HostView *view = host_view(settle->request->host, settle->view_id);
    if (!view) {
        request_fail(settle->request, "view \"%s\" was destroyed", settle->view_id);
        settle_free(settle);
        return G_SOURCE_REMOVE;
    }
    gint64 now = g_get_monotonic_time();
    gint64 quiet_since = MAX(settle->rendered, view->last_frame_time);
    gboolean settled = now - quiet_since >= settle->quiet;
    if (settled || now >= settle->deadline) {
        JsonObject *fields = view_fields(view);
        json_object_set_boolean_member(fields, "settled", settled);
        json_object_set_int_member(fields, "frames", (gint64) (view->frames - settle->frames));
        request_ok(settle->request, fields);
        settle_free(settle);
        return G_SOURCE_REMOVE;
    }
    gint64 wait = MIN(quiet_since + settle->quiet, settle->deadline) - now;
    g_timeout_add((guint) (wait / 1000) + 1, settle_check, settle);
    return G_SOURCE_REMOVE;
}

static void on_settle_rendered(GObject *source, GAsyncResult *result, gpointer data)
{
    Settle *settle = data;
    GError *error = NULL;
    WebKitJavascriptResult *js_result = webkit_web_view_run_javascript_in_world_finish(WEBKIT_WEB_VIEW(source),
                                                                                       result, &error);
    if (!js_result) {
        request_fail(settle->request, "%s", error ? error->message : "the page did not render");
        g_clear_error(&error);
        settle_free(settle);
        return;
    }
    webkit_javascript_result_unref(js_result);
    settle->rendered = g_get_monotonic_time();
    settle_check(settle);
}

static void run_settle(Request *request)
{
    HostView *view;
    int quiet, timeout;
    if (!arg_view(request, &view) || !arg_int(request, "quietMs", 150, 1, 10000, &quiet)
        || !arg_int(request, "timeoutMs", 5000, 1, 60000, &timeout))
        return;
    Settle *settle = g_new0(Settle, 1);
    settle->request = request;
    settle->view_id = g_strdup(view->id);
    settle->quiet = (gint64) quiet * 1000;
    settle->deadline = g_get_monotonic_time() + (gint64) timeout * 1000;
    settle->frames = view->frames;
    webkit_web_view_run_async_javascript_function_in_world(
        view->web_view, "await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));", NULL,
        HOST_WORLD, NULL, on_settle_rendered, settle);
}

/* The reply of a key command once the page saw its last event (or did not in time). */
typedef struct {
    Request *request;
    char *view_id;
} KeyReply;

static void on_key_done(gboolean delivered, gpointer data)
{
    KeyReply *reply = data;
    JsonObject *fields = json_object_new();
    json_object_set_string_member(fields, "viewId", reply->view_id);
    json_object_set_boolean_member(fields, "delivered", delivered);
    request_ok(reply->request, fields);
    g_free(reply->view_id);
    g_free(reply);
}

/*
 * key {key, viewId?, action?}: a remote key to `viewId` or the focused view, pressed and
 * released ("tap", the default) or one half. The reply comes once the page saw it
 * ("delivered"), so a later command runs after the key was handled. With no view to send it
 * to, it is key-unhandled (viewId null).
 */
static void run_key(Request *request)
{
    const char *name, *action;
    HostView *target = request->host->focused;
    if (!arg_string(request, "key", TRUE, &name) || !arg_string(request, "action", FALSE, &action)
        || (!is_null(request_member(request, "viewId")) && !arg_view(request, &target)))
        return;
    guint32 keysym, hardware_key_code;
    if (!keys_lookup(name, &keysym, &hardware_key_code)) {
        request_fail(request, "unknown key \"%s\"", name);
        return;
    }
    action = action ? action : "tap";
    gboolean press = strcmp(action, "tap") == 0 || strcmp(action, "press") == 0;
    gboolean release = strcmp(action, "tap") == 0 || strcmp(action, "release") == 0;
    if (!press && !release) {
        request_fail(request, "\"action\" must be tap, press or release");
        return;
    }
    if (!target) {
        JsonObject *unhandled = json_object_new();
        json_object_set_null_member(unhandled, "viewId");
        json_object_set_string_member(unhandled, "key", name);
        host_emit(request->host, "key-unhandled", unhandled);
        JsonObject *fields = json_object_new();
        json_object_set_null_member(fields, "viewId");
        json_object_set_boolean_member(fields, "delivered", FALSE);
        request_ok(request, fields);
        return;
    }
    KeyReply *reply = g_new0(KeyReply, 1);
    reply->request = request;
    reply->view_id = g_strdup(target->id);
    if (press)
        view_key(target, keysym, hardware_key_code, TRUE, release ? NULL : on_key_done, reply);
    if (release)
        view_key(target, keysym, hardware_key_code, FALSE, on_key_done, reply);
}

/* click {x, y, button?}: at screen coordinates, to the view drawn there (see host_click). */
static void run_click(Request *request)
{
    int x, y, button;
    if (!arg_int(request, "x", 0, 0, request->host->width - 1, &x)
        || !arg_int(request, "y", 0, 0, request->host->height - 1, &y)
        || !arg_int(request, "button", 1, 1, 3, &button))
        return;
    if (!request_member(request, "x") || !request_member(request, "y")) {
        request_fail(request, "missing \"x\" or \"y\"");
        return;
    }
    HostView *view = host_click(request->host, x, y, (guint) button);
    JsonObject *fields = json_object_new();
    if (view) {
        json_object_set_string_member(fields, "viewId", view->id);
        json_object_set_int_member(fields, "x", x - view->x);
        json_object_set_int_member(fields, "y", y - view->y);
    } else {
        json_object_set_null_member(fields, "viewId");
    }
    request_ok(request, fields);
}

static void run_screenshot(Request *request)
{
    const char *path;
    if (!arg_string(request, "path", TRUE, &path))
        return;
    GError *error = NULL;
    if (!compositor_write_png(request->host, path, &error)) {
        request_fail(request, "%s", error->message);
        g_error_free(error);
        return;
    }
    JsonObject *fields = json_object_new();
    json_object_set_string_member(fields, "path", path);
    request_reply(request, "screenshot-written", fields);
}

static void run_destroy_view(Request *request)
{
    HostView *view;
    if (!arg_view(request, &view))
        return;
    JsonObject *fields = view_fields(view);
    host_destroy_view(request->host, view);
    request_reply(request, "view-destroyed", fields);
}

static void run_list_views(Request *request)
{
    JsonArray *views = json_array_new();
    for (guint i = 0; i < request->host->views->len; i++)
        json_array_add_object_element(views, view_describe(g_ptr_array_index(request->host->views, i)));
    JsonObject *fields = json_object_new();
    json_object_set_array_member(fields, "views", views);
    request_ok(request, fields);
}

static void run_video_play(Request *request)
{
    const char *file;
    gboolean loop, paused;
    double start;
    if (!arg_string(request, "file", TRUE, &file) || !arg_bool(request, "loop", TRUE, &loop)
        || !arg_number(request, "start", 0, 0, MAX_VIDEO_START, &start)
        || !arg_bool(request, "paused", FALSE, &paused))
        return;
    GError *error = NULL;
    if (!video_play(request->host->video, file, loop, start, paused, &error)) {
        request_fail(request, "%s", error->message);
        g_error_free(error);
        return;
    }
    request_ok(request, video_status(request->host->video));
}

/* video-seek {position, loop?}: the reply at once; video-seeked once the frame there is shown. */
static void run_video_seek(Request *request)
{
    double position;
    gboolean loop = FALSE;
    if (!request_member(request, "position")) {
        request_fail(request, "missing \"position\"");
        return;
    }
    if (!arg_number(request, "position", 0, 0, MAX_VIDEO_START, &position)
        || !arg_bool(request, "loop", FALSE, &loop))
        return;
    int change_loop = is_null(request_member(request, "loop")) ? -1 : loop;
    if (!video_seek(request->host->video, position, change_loop))
        request_fail(request, "no video is loaded");
    else
        request_ok(request, video_status(request->host->video));
}

static void run_video_pause(Request *request)
{
    if (!video_pause(request->host->video))
        request_fail(request, "no video is playing");
    else
        request_ok(request, video_status(request->host->video));
}

static void run_video_resume(Request *request)
{
    if (!video_resume(request->host->video))
        request_fail(request, "no video is loaded");
    else
        request_ok(request, video_status(request->host->video));
}

static void run_video_stop(Request *request)
{
    video_stop(request->host->video);
    host_damage(request->host);
    request_ok(request, video_status(request->host->video));
}

static void run_video_status(Request *request)
{
    request_ok(request, video_status(request->host->video));
}

static void run_quit(Request *request)
{
    Host *host = request->host;
    request_ok(request, NULL);
    host_quit(host);
}

static const struct {
    const char *name;
    void (*run)(Request *request);
} commands[] = {
    { "create-view", run_create_view },   { "navigate", run_navigate },
    { "set-rect", run_set_rect },         { "show", run_show },
    { "hide", run_hide },                 { "raise", run_raise },
    { "lower", run_lower },               { "focus", run_focus },
    { "run-js", run_run_js },             { "key", run_key },
    { "click", run_click },               { "settle", run_settle },
    { "screenshot", run_screenshot },
    { "destroy-view", run_destroy_view }, { "list-views", run_list_views },
    { "video-play", run_video_play },     { "video-seek", run_video_seek },
    { "video-pause", run_video_pause },
    { "video-resume", run_video_resume }, { "video-stop", run_video_stop },
    { "video-status", run_video_status }, { "quit", run_quit },
};

void commands_handle_line(Host *host, const char *line)
{
    if (line && !line[0])
        return;
    JsonNode *root = line ? json_from_string(line, NULL) : NULL;
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        JsonObject *fields = json_object_new();
        json_object_set_string_member(fields, "message", line ? "a command is one JSON object per line"
                                                               : "a command line was too long and was dropped");
        host_emit(host, "error", fields);
        if (root)
            json_node_unref(root);
        return;
    }
    Request *request = request_new(host, json_node_get_object(root));
    json_node_unref(root);
    const char *name;
    if (!arg_string(request, "cmd", TRUE, &name))
        return;
    for (gsize i = 0; i < G_N_ELEMENTS(commands); i++) {
        if (strcmp(commands[i].name, name) == 0) {
            commands[i].run(request);
            return;
        }
    }
    request_fail(request, "unknown command \"%s\"", name);
}
