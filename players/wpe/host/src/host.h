/*
 * The host's state, shared by its parts: the screen's size, the views in creation order, the
 * focused view, the web context every view shares, the video, the window (with a display) and
 * the control channel. One instance lives for the whole process; every part runs on the GLib
 * main loop's thread (GStreamer's streaming threads only set an atomic flag, see video.c).
 */
#ifndef WPE_HOST_HOST_H
#define WPE_HOST_HOST_H

#include <cairo.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <wpe/webkit.h>

typedef struct Protocol Protocol;
typedef struct Video Video;
typedef struct HostWindow HostWindow;
typedef struct HostView HostView;

typedef struct Host {
    int width;
    int height;
    int fps;
    gboolean automation;
    GMainLoop *loop;
    WebKitWebContext *context;
    /* Every live view in creation order (owned); `by_id` indexes them by their id. */
    GPtrArray *views;
    GHashTable *by_id;
    HostView *focused;
    /* The next z for `raise`, and the creation counter that breaks ties in z. */
    int top_z;
    guint64 created;
    /* The isolated world's script every view gets (host-world.js). */
    char *host_world_script;
    Protocol *protocol;
    Video *video;
    /* With a display: the window, the frame it shows, and whether that frame is out of date. */
    HostWindow *window;
    cairo_surface_t *screen;
    gboolean damaged;
    guint tick;
    gboolean quitting;
} Host;

/* The name of the isolated script world the host's own scripts run in: pages cannot see it. */
#define HOST_WORLD "wpehost"

/* Writes one event line: {"event": NAME, ...fields}. Takes ownership of `fields` (may be NULL). */
void host_emit(Host *host, const char *name, JsonObject *fields);

/* Stops the main loop; main() then tears everything down and exits 0. */
void host_quit(Host *host);

/* The view with this id, or NULL. */
HostView *host_view(Host *host, const char *view_id);

/* Removes a view from the screen and closes its page (view-destroyed is the caller's to report). */
void host_destroy_view(Host *host, HostView *view);

/* Gives the remote's focus to `view` (NULL: no view has it). */
void host_focus(Host *host, HostView *view);

/*
 * A remote key from the window (an XKB keysym) pressed or released: it goes to the focused
 * view, or, with no focused view, is reported as key-unhandled with a null viewId.
 */
HostView *host_key(Host *host, guint32 keysym, guint32 hardware_key_code, gboolean pressed);

/* A click at screen coordinates, sent to the topmost visible view with a painted pixel there. */
HostView *host_click(Host *host, int x, int y, guint button);

/* Something on screen changed: the window repaints at its next tick. */
void host_damage(Host *host);

/* Creates a view for a WebDriver session (automation.c); the view is shown and focused. */
WebKitWebView *host_create_automation_view(Host *host);

#endif
