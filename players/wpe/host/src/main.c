/*
 * wpe-host: web views on WPE WebKit (WPEBackend-fdo's SHM export: no GPU, no display needed),
 * composited over a GStreamer video, driven by JSON lines on stdin/stdout (README.md).
 *
 *     wpe-host [--size WxH] [--video FILE] [--fps N] [--headless] [--automation]
 *              [--control-socket PATH]
 *
 * It runs until SIGTERM, SIGINT, SIGHUP, the `quit` command or the end of its input, and then
 * exits 0 once every process it started (WebKit's web and network processes) is gone.
 */
#include "automation.h"
#include "commands.h"
#include "compositor.h"
#include "children.h"
#include "host.h"
#include "protocol.h"
#include "video.h"
#include "view.h"
#include "window.h"

#include <gio/gio.h>
#include <glib-unix.h>
#include <gst/gst.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <wpe/fdo.h>
#include <wpe/unstable/fdo-shm.h>

/* How long WebKit's processes get to exit by themselves at shutdown before they are signalled. */
#define CHILDREN_GRACE_MS 2000

/* ---- the main loop's sources ---- */

static gboolean on_tick(gpointer data)
{
    Host *host = data;
    for (guint i = 0; i < host->views->len; i++)
        view_frame_done(g_ptr_array_index(host->views, i));
    if (host->window) {
        window_dispatch(host->window);
        if (host->damaged || video_has_new_frame(host->video)) {
            if (!host->screen)
                host->screen = cairo_image_surface_create(CAIRO_FORMAT_RGB24, host->width, host->height);
            compositor_draw(host, host->screen);
            window_present(host->window, host->screen);
            host->damaged = FALSE;
        }
    }
    return G_SOURCE_CONTINUE;
}

static gboolean on_signal(gpointer data)
{
    host_quit(data);
    return G_SOURCE_CONTINUE;
}

static void on_line(const char *line, gpointer data)
{
    commands_handle_line(data, line);
}

static void on_closed(gpointer data)
{
    host_quit(data);
}

/* ---- startup and shutdown ---- */

typedef struct {
    char *size;
    char *video;
    int fps;
    gboolean headless;
    gboolean automation;
    char *control_socket;
} Options;

static gboolean parse_options(int *argc, char ***argv, Options *options, GError **error)
{
    options->fps = 25;
    GOptionEntry entries[] = {
        { "size", 0, 0, G_OPTION_ARG_STRING, &options->size,
          "the screen in pixels (default 1280x720 headless, the display's size with one)", "WxH" },
        { "video", 0, 0, G_OPTION_ARG_FILENAME, &options->video, "a video played in a loop under the views", "FILE" },
        { "fps", 0, 0, G_OPTION_ARG_INT, &options->fps, "frames per second of the compositor (default 25)", "N" },
        { "headless", 0, 0, G_OPTION_ARG_NONE, &options->headless, "no window even with $DISPLAY", NULL },
        { "automation", 0, 0, G_OPTION_ARG_NONE, &options->automation, "let WPEWebDriver drive the views", NULL },
        { "control-socket", 0, 0, G_OPTION_ARG_FILENAME, &options->control_socket,
          "serve the control protocol on this Unix socket instead of stdin/stdout", "PATH" },
        { NULL },
    };
    GOptionContext *context = g_option_context_new("- web views on WPE WebKit over a video");
    g_option_context_add_main_entries(context, entries, NULL);
    gboolean parsed = g_option_context_parse(context, argc, argv, error);
    g_option_context_free(context);
    if (parsed && (options->fps < 1 || options->fps > 120)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--fps must be between 1 and 120");
        parsed = FALSE;
    }
    return parsed;
}

static gboolean parse_size(const char *text, int *width, int *height)
{
    unsigned w = 0, h = 0;
    char end = 0;
    if (sscanf(text, "%ux%u%c", &w, &h, &end) != 2 || w < 16 || h < 16 || w > 8192 || h > 8192)
        return FALSE;
    *width = (int) w;
    *height = (int) h;
    return TRUE;
}

static char *load_host_world_script(void)
{
    GBytes *bytes = g_resources_lookup_data("/org/interactived/wpe-host/host-world.js", 0, NULL);
    char *script = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
    g_bytes_unref(bytes);
    return script;
}

static void emit_ready(Host *host)
{
    JsonObject *fields = json_object_new();
    json_object_set_int_member(fields, "width", host->width);
    json_object_set_int_member(fields, "height", host->height);
    json_object_set_int_member(fields, "fps", host->fps);
    json_object_set_boolean_member(fields, "headless", host->window == NULL);
    json_object_set_boolean_member(fields, "automation", host->automation);
    json_object_set_int_member(fields, "pid", getpid());
    char *version = g_strdup_printf("%u.%u.%u", webkit_get_major_version(), webkit_get_minor_version(),
                                    webkit_get_micro_version());
    json_object_set_string_member(fields, "webkit", version);
    g_free(version);
    host_emit(host, "ready", fields);
}

static void destroy_views(Host *host)
{
    host->focused = NULL;
    g_hash_table_remove_all(host->by_id);
    while (host->views->len > 0) {
        HostView *view = g_ptr_array_steal_index(host->views, host->views->len - 1);
        view_free(view);
    }
}

int main(int argc, char **argv)
{
    Options options = { 0 };
    GError *error = NULL;
    if (!parse_options(&argc, &argv, &options, &error)) {
        fprintf(stderr, "wpe-host: %s\n", error->message);
        return 2;
    }
    Host host = { .fps = options.fps, .automation = options.automation, .width = 1280, .height = 720 };
    if (options.size && !parse_size(options.size, &host.width, &host.height)) {
        fprintf(stderr, "wpe-host: --size must be WxH (16 to 8192 each), not %s\n", options.size);
        return 2;
    }
    host.loop = g_main_loop_new(NULL, FALSE);
    host.views = g_ptr_array_new();
    host.by_id = g_hash_table_new(g_str_hash, g_str_equal);
    /* First, before anything can start a process that would inherit stdout. */
    host.protocol = options.control_socket
                        ? protocol_new_socket(options.control_socket, on_line, on_closed, &host, &error)
                        : protocol_new_stdio(on_line, on_closed, &host, &error);
    if (!host.protocol) {
        fprintf(stderr, "wpe-host: %s\n", error->message);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    g_unix_signal_add(SIGTERM, on_signal, &host);
    g_unix_signal_add(SIGINT, on_signal, &host);
    g_unix_signal_add(SIGHUP, on_signal, &host);
    gst_init(NULL, NULL);

    if (!options.headless && g_getenv("DISPLAY")) {
        int screen_width, screen_height;
        host.window = window_open(&host, &screen_width, &screen_height);
        if (host.window && !options.size) {
            host.width = screen_width;
            host.height = screen_height;
        }
    }
    if (!wpe_loader_init("libWPEBackend-fdo-1.0.so.1") || !wpe_fdo_initialize_shm()) {
        fprintf(stderr, "wpe-host: WPEBackend-fdo's SHM export is not available\n");
        return 1;
    }
    host.host_world_script = load_host_world_script();
    host.context = webkit_web_context_new_ephemeral();
    webkit_web_context_set_cache_model(host.context, WEBKIT_CACHE_MODEL_DOCUMENT_VIEWER);
    if (host.automation)
        automation_enable(&host);
    host.video = video_new(&host);
    emit_ready(&host);
    if (options.video && !video_play(host.video, options.video, TRUE, 0, FALSE, &error)) {
        JsonObject *fields = json_object_new();
        json_object_set_string_member(fields, "file", options.video);
        json_object_set_string_member(fields, "message", error->message);
        host_emit(&host, "video-error", fields);
        g_clear_error(&error);
    }
    host.tick = g_timeout_add(1000 / (guint) host.fps, on_tick, &host);

    g_main_loop_run(host.loop);

    g_source_remove(host.tick);
    destroy_views(&host);
    video_free(host.video);
    g_object_unref(host.context);
    children_end(CHILDREN_GRACE_MS);
    if (host.window)
        window_free(host.window);
    if (host.screen)
        cairo_surface_destroy(host.screen);
    protocol_free(host.protocol);
    g_ptr_array_free(host.views, TRUE);
    g_hash_table_destroy(host.by_id);
    g_main_loop_unref(host.loop);
    g_free(host.host_world_script);
    return 0;
}
