#include "view.h"

#include <string.h>
#include <wayland-server.h>
#include <wpe/fdo.h>

/* Handlers in the host's isolated world: its own scripts' reports and host-world.js's keys. */
#define HOST_HANDLER "host"
#define HOST_KEYS_HANDLER "hostKeys"

/*
 * The exportable backend's side of a view. WebKit owns it (it is freed by the backend's destroy
 * notify when the web view finalizes), so it can outlive the HostView by a moment: `view` is
 * cleared when the view is freed, and buffers arriving after that are released unseen.
 */
struct ViewBackend {
    struct wpe_view_backend_exportable_fdo *exportable;
    HostView *view;
    /* WebKit delivered a frame and waits for frame-complete before it renders the next one. */
    gboolean frame_pending;
};

/* How long a key event's sender waits for the page to report it. */
#define KEY_WAIT_MS 2000

/* A key event whose sender waits for the page to report it (view_key). */
typedef struct {
    HostView *view;
    gboolean pressed;
    ViewKeyDone done;
    gpointer data;
    guint timeout;
} KeyWait;

/* A page-world message handler: which view, under which name. */
typedef struct {
    HostView *view;
    char *name;
} HandlerBinding;

gboolean view_kind_parse(const char *name, ViewKind *kind)
{
    if (g_strcmp0(name, "overlay") == 0)
        *kind = VIEW_OVERLAY;
    else if (g_strcmp0(name, "tv") == 0)
        *kind = VIEW_TV;
    else
        return FALSE;
    return TRUE;
}

const char *view_kind_name(ViewKind kind)
{
    return kind == VIEW_TV ? "tv" : "overlay";
}

JsonObject *view_fields(HostView *view)
{
    JsonObject *fields = json_object_new();
    json_object_set_string_member(fields, "viewId", view->id);
    return fields;
}

/* ---- frames from WPEBackend-fdo's SHM export ---- */

static void copy_shm_frame(HostView *view, struct wl_shm_buffer *shm)
{
    int width = wl_shm_buffer_get_width(shm);
    int height = wl_shm_buffer_get_height(shm);
    int stride = wl_shm_buffer_get_stride(shm);
    /* WL_SHM_FORMAT_ARGB8888 is premultiplied, as cairo's ARGB32 is: the bytes copy as they are. */
    cairo_format_t format = wl_shm_buffer_get_format(shm) == WL_SHM_FORMAT_XRGB8888 ? CAIRO_FORMAT_RGB24
                                                                                     : CAIRO_FORMAT_ARGB32;
    if (width <= 0 || height <= 0)
        return;
    if (!view->frame || cairo_image_surface_get_width(view->frame) != width
        || cairo_image_surface_get_height(view->frame) != height
        || cairo_image_surface_get_format(view->frame) != format) {
        if (view->frame)
            cairo_surface_destroy(view->frame);
        view->frame = cairo_image_surface_create(format, width, height);
    }
    cairo_surface_flush(view->frame);
    unsigned char *target = cairo_image_surface_get_data(view->frame);
    int target_stride = cairo_image_surface_get_stride(view->frame);
    wl_shm_buffer_begin_access(shm);
    const unsigned char *source = wl_shm_buffer_get_data(shm);
    for (int row = 0; row < height; row++)
        memcpy(target + (gsize) row * (gsize) target_stride, source + (gsize) row * (gsize) stride,
               (gsize) width * 4);
    wl_shm_buffer_end_access(shm);
    cairo_surface_mark_dirty(view->frame);
    view->frames++;
    view->last_frame_time = g_get_monotonic_time();
}

static void on_export_shm_buffer(void *data, struct wpe_fdo_shm_exported_buffer *buffer)
{
    struct ViewBackend *backend = data;
    if (backend->view) {
        copy_shm_frame(backend->view, wpe_fdo_shm_exported_buffer_get_shm_buffer(buffer));
        if (backend->view->visible)
            host_damage(backend->view->host);
    }
    wpe_view_backend_exportable_fdo_dispatch_release_shm_exported_buffer(backend->exportable, buffer);
    backend->frame_pending = TRUE;
}

/* SHM is the only export the host initialises (wpe_fdo_initialize_shm); others are returned unread. */
static void on_export_buffer_resource(void *data, struct wl_resource *resource)
{
    struct ViewBackend *backend = data;
    wpe_view_backend_exportable_fdo_dispatch_release_buffer(backend->exportable, resource);
    backend->frame_pending = TRUE;
}

static const struct wpe_view_backend_exportable_fdo_client exportable_client = {
    .export_buffer_resource = on_export_buffer_resource,
    .export_shm_buffer = on_export_shm_buffer,
};

static void view_backend_destroy(gpointer data)
{
    struct ViewBackend *backend = data;
    wpe_view_backend_exportable_fdo_destroy(backend->exportable);
    g_free(backend);
}

static struct wpe_view_backend *wpe_backend(HostView *view)
{
    return wpe_view_backend_exportable_fdo_get_view_backend(view->backend->exportable);
}

void view_frame_done(HostView *view)
{
    if (view->backend->frame_pending) {
        view->backend->frame_pending = FALSE;
        wpe_view_backend_exportable_fdo_dispatch_frame_complete(view->backend->exportable);
    }
}

/* ---- script messages ---- */

/* The posted value as the page gave it: a string as it is, anything else as JSON. */
static char *message_body(WebKitJavascriptResult *result)
{
    JSCValue *value = webkit_javascript_result_get_js_value(result);
    if (jsc_value_is_string(value))
        return jsc_value_to_string(value);
    char *json = jsc_value_to_json(value, 0);
    return json ? json : g_strdup("null");
}

static void on_page_message(WebKitUserContentManager *content, WebKitJavascriptResult *result, gpointer data)
{
    HandlerBinding *binding = data;
    (void) content;
    JsonObject *fields = view_fields(binding->view);
    char *body = message_body(result);
    const char *event;
    if (strcmp(binding->name, "IOS") == 0) {
        event = "ios-message";
    } else if (strcmp(binding->name, "tv") == 0) {
        event = "tv-message";
    } else {
        event = "script-message";
        json_object_set_string_member(fields, "handler", binding->name);
    }
    json_object_set_string_member(fields, "body", body);
    g_free(body);
    host_emit(binding->view->host, event, fields);
}

static void on_host_message(WebKitUserContentManager *content, WebKitJavascriptResult *result, gpointer data)
{
    HostView *view = data;
    (void) content;
    JsonObject *fields = view_fields(view);
    char *body = message_body(result);
    json_object_set_string_member(fields, "body", body);
    g_free(body);
    host_emit(view->host, "host-message", fields);
}

static void key_wait_finish(KeyWait *wait, gboolean delivered)
{
    g_queue_remove(&wait->view->key_waits, wait);
    if (wait->timeout)
        g_source_remove(wait->timeout);
    wait->done(delivered, wait->data);
    g_free(wait);
}

static gboolean on_key_wait_timeout(gpointer data)
{
    KeyWait *wait = data;
    wait->timeout = 0;
    key_wait_finish(wait, FALSE);
    return G_SOURCE_REMOVE;
}

/* The page saw a keydown or keyup: the oldest wait for that kind of event is over. */
static void key_seen(HostView *view, gboolean pressed)
{
    for (GList *link = view->key_waits.head; link; link = link->next) {
        KeyWait *wait = link->data;
        if (wait->pressed == pressed) {
            key_wait_finish(wait, TRUE);
            return;
        }
    }
}

/* host-world.js's reports: {"seen": "keydown" | "keyup"} and {"unhandled": KEY}. */
static void on_host_keys(WebKitUserContentManager *content, WebKitJavascriptResult *result, gpointer data)
{
    HostView *view = data;
    (void) content;
    char *body = message_body(result);
    JsonNode *node = json_from_string(body, NULL);
    g_free(body);
    JsonObject *report = node && JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
    const char *seen = report ? json_object_get_string_member_with_default(report, "seen", NULL) : NULL;
    const char *unhandled = report ? json_object_get_string_member_with_default(report, "unhandled", NULL) : NULL;
    if (seen) {
        key_seen(view, g_strcmp0(seen, "keydown") == 0);
    } else if (unhandled) {
        JsonObject *fields = view_fields(view);
        json_object_set_string_member(fields, "key", unhandled);
        host_emit(view->host, "key-unhandled", fields);
    }
    if (node)
        json_node_unref(node);
}

static void free_binding(gpointer data, GClosure *closure)
{
    HandlerBinding *binding = data;
    (void) closure;
    g_free(binding->name);
    g_free(binding);
}

/* ---- loads ---- */

static gboolean is_about_blank(const char *uri)
{
    return uri && g_str_has_prefix(uri, "about:blank");
}

/* The outcome of the load a navigate asked for is known: later loads are the page's own. */
static void outcome_reported(HostView *view)
{
    view->outcome_reported = TRUE;
    g_clear_pointer(&view->requested_url, g_free);
}

static void report_failure(HostView *view, const char *url, const char *reason, guint status)
{
    JsonObject *fields = view_fields(view);
    json_object_set_string_member(fields, "url", url ? url : "");
    json_object_set_string_member(fields, "reason", reason);
    if (status)
        json_object_set_int_member(fields, "status", status);
    outcome_reported(view);
    host_emit(view->host, "load-failed", fields);
}

static void on_load_changed(WebKitWebView *web_view, WebKitLoadEvent event, gpointer data)
{
    HostView *view = data;
    const char *uri = webkit_web_view_get_uri(web_view);
    if (event == WEBKIT_LOAD_STARTED) {
        view->outcome_reported = FALSE;
        JsonObject *fields = view_fields(view);
        json_object_set_string_member(fields, "url", uri ? uri : "");
        host_emit(view->host, "load-started", fields);
        return;
    }
    if (event != WEBKIT_LOAD_FINISHED || view->outcome_reported)
        return;
    if (view->requested_url && !is_about_blank(view->requested_url) && is_about_blank(uri)) {
        /* WebKit refuses some URLs (a port on its blocked list) by loading about:blank, silently. */
        report_failure(view, view->requested_url,
                       "blocked: WebKit loaded about:blank instead (a port or scheme it refuses)", 0);
        return;
    }
    WebKitWebResource *resource = webkit_web_view_get_main_resource(web_view);
    WebKitURIResponse *response = resource ? webkit_web_resource_get_response(resource) : NULL;
    guint status = response ? webkit_uri_response_get_status_code(response) : 0;
    if (status >= 400) {
        char *reason = g_strdup_printf("HTTP %u", status);
        report_failure(view, uri, reason, status);
        g_free(reason);
        return;
    }
    outcome_reported(view);
    JsonObject *fields = view_fields(view);
    json_object_set_string_member(fields, "url", uri ? uri : "");
    json_object_set_int_member(fields, "status", status);
    host_emit(view->host, "load-finished", fields);
}

static gboolean on_load_failed(WebKitWebView *web_view, WebKitLoadEvent event, char *failing_uri, GError *error,
                               gpointer data)
{
    HostView *view = data;
    (void) web_view;
    (void) event;
    if (g_error_matches(error, WEBKIT_NETWORK_ERROR, WEBKIT_NETWORK_ERROR_CANCELLED)) {
        /* Superseded by a newer navigation, whose own outcome follows. */
        view->outcome_reported = TRUE;
        return TRUE;
    }
    if (!view->outcome_reported)
        report_failure(view, failing_uri, error->message, 0);
    /* TRUE: no error page; the view stays transparent. */
    return TRUE;
}

static void on_web_process_terminated(WebKitWebView *web_view, WebKitWebProcessTerminationReason reason,
                                      gpointer data)
{
    HostView *view = data;
    (void) web_view;
    const char *name = reason == WEBKIT_WEB_PROCESS_CRASHED                    ? "crashed"
                       : reason == WEBKIT_WEB_PROCESS_EXCEEDED_MEMORY_LIMIT ? "exceeded-memory-limit"
                                                                             : "terminated-by-api";
    if (!view->outcome_reported)
        report_failure(view, view->requested_url, "the web process ended during the load", 0);
    JsonObject *fields = view_fields(view);
    json_object_set_string_member(fields, "reason", name);
    host_emit(view->host, "web-process-terminated", fields);
}

/* Pages get no pop-ups, no permission and no modal dialog (nothing could answer one). */
static WebKitWebView *on_create(WebKitWebView *web_view, WebKitNavigationAction *action, gpointer data)
{
    (void) web_view;
    (void) action;
    (void) data;
    return NULL;
}

static gboolean on_permission_request(WebKitWebView *web_view, WebKitPermissionRequest *request, gpointer data)
{
    (void) web_view;
    (void) data;
    webkit_permission_request_deny(request);
    return TRUE;
}

static gboolean on_script_dialog(WebKitWebView *web_view, WebKitScriptDialog *dialog, gpointer data)
{
    HostView *view = data;
    (void) web_view;
    JsonObject *fields = view_fields(view);
    static const char *const kinds[] = { "alert", "confirm", "prompt", "before-unload-confirm" };
    WebKitScriptDialogType type = webkit_script_dialog_get_dialog_type(dialog);
    json_object_set_string_member(fields, "kind", type < G_N_ELEMENTS(kinds) ? kinds[type] : "unknown");
    json_object_set_string_member(fields, "message", webkit_script_dialog_get_message(dialog));
    host_emit(view->host, "script-dialog", fields);
    return TRUE;
}

/* window.close() in a page: reported; the player decides. WebDriver closing its window (a view
 * controlled by automation): the view is destroyed inside the signal, because WebDriver lists the
 * windows again as soon as its close returns and closes each one it finds (a view destroyed later
 * would be closed twice, the second time as "no such window"). The emission holds its own
 * reference to the web view, so WebKit finalizes it when the signal ends. */
static void on_close(WebKitWebView *web_view, gpointer data)
{
    HostView *view = data;
    (void) web_view;
    host_emit(view->host, "close-requested", view_fields(view));
    if (!view->controlled_by_automation)
        return;
    Host *host = view->host;
    JsonObject *fields = view_fields(view);
    host_destroy_view(host, view);
    host_emit(host, "view-destroyed", fields);
}

/* ---- creation and destruction ---- */

static void register_page_handler(HostView *view, const char *name)
{
    if (!webkit_user_content_manager_register_script_message_handler(view->content, name))
        return;
    HandlerBinding *binding = g_new0(HandlerBinding, 1);
    binding->view = view;
    binding->name = g_strdup(name);
    char *signal = g_strconcat("script-message-received::", name, NULL);
    g_signal_connect_data(view->content, signal, G_CALLBACK(on_page_message), binding, free_binding, 0);
    g_free(signal);
}

HostView *view_new(Host *host, const char *id, const ViewOptions *options)
{
    HostView *view = g_new0(HostView, 1);
    view->host = host;
    view->id = g_strdup(id);
    view->kind = options->kind;
    view->x = options->x;
    view->y = options->y;
    view->width = options->width;
    view->height = options->height;
    view->z = options->z;
    view->visible = options->visible;
    view->controlled_by_automation = options->controlled_by_automation;
    view->order = host->created++;
    g_queue_init(&view->key_waits);

    view->backend = g_new0(struct ViewBackend, 1);
    view->backend->view = view;
    view->backend->exportable = wpe_view_backend_exportable_fdo_create(&exportable_client, view->backend,
                                                                       (uint32_t) view->width,
                                                                       (uint32_t) view->height);
    struct wpe_view_backend *backend = wpe_backend(view);
    WebKitWebViewBackend *web_view_backend = webkit_web_view_backend_new(backend, view_backend_destroy,
                                                                         view->backend);

    view->content = webkit_user_content_manager_new();
    const char *const default_handlers[] = { view->kind == VIEW_TV ? "tv" : "IOS", NULL };
    const char *const *handlers = options->handlers ? (const char *const *) options->handlers : default_handlers;
    for (const char *const *name = handlers; *name; name++)
        register_page_handler(view, *name);
    webkit_user_content_manager_register_script_message_handler_in_world(view->content, HOST_HANDLER, HOST_WORLD);
    webkit_user_content_manager_register_script_message_handler_in_world(view->content, HOST_KEYS_HANDLER,
                                                                          HOST_WORLD);
    g_signal_connect(view->content, "script-message-received::" HOST_HANDLER, G_CALLBACK(on_host_message), view);
    g_signal_connect(view->content, "script-message-received::" HOST_KEYS_HANDLER, G_CALLBACK(on_host_keys),
                     view);
    WebKitUserScript *host_script = webkit_user_script_new_for_world(
        host->host_world_script, WEBKIT_USER_CONTENT_INJECT_ALL_FRAMES, WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_START,
        HOST_WORLD, NULL, NULL);
    webkit_user_content_manager_add_script(view->content, host_script);
    webkit_user_script_unref(host_script);
    for (guint i = 0; options->scripts && i < options->scripts->len; i++)
        webkit_user_content_manager_add_script(view->content, g_ptr_array_index(options->scripts, i));

    WebKitSettings *settings = webkit_settings_new();
    webkit_settings_set_enable_page_cache(settings, FALSE);
    webkit_settings_set_enable_write_console_messages_to_stdout(settings, FALSE);
    HostView *related = NULL;
    for (guint i = 0; i < host->views->len && !related; i++) {
        HostView *other = g_ptr_array_index(host->views, i);
        if (other->kind == view->kind)
            related = other;
    }
    view->web_view = g_object_new(WEBKIT_TYPE_WEB_VIEW, "backend", web_view_backend, "web-context", host->context,
                                  "user-content-manager", view->content, "settings", settings,
                                  "is-controlled-by-automation", options->controlled_by_automation,
                                  "related-view", related ? related->web_view : NULL, NULL);
    g_object_unref(settings);
    WebKitColor background = options->background;
    webkit_web_view_set_background_color(view->web_view, &background);

    g_signal_connect(view->web_view, "load-changed", G_CALLBACK(on_load_changed), view);
    g_signal_connect(view->web_view, "load-failed", G_CALLBACK(on_load_failed), view);
    g_signal_connect(view->web_view, "web-process-terminated", G_CALLBACK(on_web_process_terminated), view);
    g_signal_connect(view->web_view, "create", G_CALLBACK(on_create), view);
    g_signal_connect(view->web_view, "permission-request", G_CALLBACK(on_permission_request), view);
    g_signal_connect(view->web_view, "script-dialog", G_CALLBACK(on_script_dialog), view);
    g_signal_connect(view->web_view, "close", G_CALLBACK(on_close), view);

    /* Always visible and in a window for WebKit (pages run and paint while the host hides them). */
    wpe_view_backend_add_activity_state(backend, wpe_view_activity_state_visible | wpe_view_activity_state_in_window);
    return view;
}

void view_free(HostView *view)
{
    g_signal_handlers_disconnect_by_data(view->web_view, view);
    g_signal_handlers_disconnect_by_data(view->content, view);
    g_signal_handlers_disconnect_matched(view->content, G_SIGNAL_MATCH_FUNC, 0, 0, NULL, on_page_message, NULL);
    view->backend->view = NULL;
    while (view->key_waits.head)
        key_wait_finish(view->key_waits.head->data, FALSE);
    /* The web view's last reference: its page closes, and WebKit frees the backend. */
    g_object_unref(view->web_view);
    g_object_unref(view->content);
    if (view->frame)
        cairo_surface_destroy(view->frame);
    g_free(view->requested_url);
    g_free(view->id);
    g_free(view);
}

/* ---- commands ---- */

void view_navigate(HostView *view, const char *url)
{
    g_free(view->requested_url);
    view->requested_url = g_strdup(url);
    webkit_web_view_load_uri(view->web_view, url);
}

void view_set_rect(HostView *view, int x, int y, int width, int height)
{
    gboolean resized = width != view->width || height != view->height;
    view->x = x;
    view->y = y;
    view->width = width;
    view->height = height;
    if (resized)
        wpe_view_backend_dispatch_set_size(wpe_backend(view), (uint32_t) width, (uint32_t) height);
}

void view_set_focused(HostView *view, gboolean focused)
{
    if (focused)
        wpe_view_backend_add_activity_state(wpe_backend(view), wpe_view_activity_state_focused);
    else
        wpe_view_backend_remove_activity_state(wpe_backend(view), wpe_view_activity_state_focused);
}

static uint32_t event_time(void)
{
    return (uint32_t) (g_get_monotonic_time() / 1000);
}

void view_key(HostView *view, guint32 keysym, guint32 hardware_key_code, gboolean pressed, ViewKeyDone done,
              gpointer data)
{
    if (done) {
        KeyWait *wait = g_new0(KeyWait, 1);
        wait->view = view;
        wait->pressed = pressed;
        wait->done = done;
        wait->data = data;
        wait->timeout = g_timeout_add(KEY_WAIT_MS, on_key_wait_timeout, wait);
        g_queue_push_tail(&view->key_waits, wait);
    }
    struct wpe_input_keyboard_event event = {
        .time = event_time(),
        .key_code = keysym,
        .hardware_key_code = hardware_key_code,
        .pressed = pressed,
        .modifiers = 0,
    };
    wpe_view_backend_dispatch_keyboard_event(wpe_backend(view), &event);
}

void view_click(HostView *view, int x, int y, guint button)
{
    struct wpe_view_backend *backend = wpe_backend(view);
    struct wpe_input_pointer_event event = {
        .type = wpe_input_pointer_event_type_motion,
        .time = event_time(),
        .x = x,
        .y = y,
    };
    wpe_view_backend_dispatch_pointer_event(backend, &event);
    event.type = wpe_input_pointer_event_type_button;
    event.button = button;
    event.state = 1;
    event.modifiers = button == 1 ? wpe_input_pointer_modifier_button1 : 0;
    wpe_view_backend_dispatch_pointer_event(backend, &event);
    event.time = event_time();
    event.state = 0;
    event.modifiers = 0;
    wpe_view_backend_dispatch_pointer_event(backend, &event);
}

gboolean view_painted_at(HostView *view, int x, int y)
{
    if (!view->frame || x < 0 || y < 0 || x >= cairo_image_surface_get_width(view->frame)
        || y >= cairo_image_surface_get_height(view->frame))
        return FALSE;
    if (cairo_image_surface_get_format(view->frame) == CAIRO_FORMAT_RGB24)
        return TRUE;
    cairo_surface_flush(view->frame);
    const unsigned char *row = cairo_image_surface_get_data(view->frame)
                               + (gsize) y * (gsize) cairo_image_surface_get_stride(view->frame);
    guint32 pixel;
    memcpy(&pixel, row + (gsize) x * 4, sizeof pixel);
    return (pixel >> 24) != 0;
}

JsonObject *view_describe(HostView *view)
{
    JsonObject *fields = view_fields(view);
    json_object_set_string_member(fields, "kind", view_kind_name(view->kind));
    json_object_set_int_member(fields, "x", view->x);
    json_object_set_int_member(fields, "y", view->y);
    json_object_set_int_member(fields, "width", view->width);
    json_object_set_int_member(fields, "height", view->height);
    json_object_set_int_member(fields, "z", view->z);
    json_object_set_boolean_member(fields, "visible", view->visible);
    json_object_set_boolean_member(fields, "focused", view->host->focused == view);
    const char *uri = webkit_web_view_get_uri(view->web_view);
    json_object_set_string_member(fields, "url", uri ? uri : "");
    /* The size of the latest frame WebKit delivered (it follows a resize a frame or two later). */
    json_object_set_int_member(fields, "frameWidth", view->frame ? cairo_image_surface_get_width(view->frame) : 0);
    json_object_set_int_member(fields, "frameHeight", view->frame ? cairo_image_surface_get_height(view->frame) : 0);
    json_object_set_int_member(fields, "frames", (gint64) view->frames);
    return fields;
}
