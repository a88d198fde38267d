/*
 * One web view: a WebKitWebView over WPEBackend-fdo's SHM exportable backend, its own user
 * content manager (script message handlers, user scripts), its place on the screen, and the
 * outcome of its loads. Every view renders with a transparent background; the compositor draws
 * its latest frame at its rectangle.
 */
#ifndef WPE_HOST_VIEW_H
#define WPE_HOST_VIEW_H

#include "host.h"

#include <cairo.h>

typedef enum {
    /* An overlay: the page gets the engine's window.webkit.messageHandlers.IOS. */
    VIEW_OVERLAY,
    /* The TV page: full screen, window.webkit.messageHandlers.tv for its reports. */
    VIEW_TV,
} ViewKind;

typedef struct {
    ViewKind kind;
    int x, y, width, height, z;
    gboolean visible;
    /* The page-world message handler names; NULL: the kind's default ("IOS" or "tv"). */
    GStrv handlers;
    /* User scripts (owned WebKitUserScript*), added before the first load. */
    GPtrArray *scripts;
    /* The background; alpha 0 by default. */
    WebKitColor background;
    gboolean controlled_by_automation;
} ViewOptions;

struct HostView {
    Host *host;
    char *id;
    ViewKind kind;
    int x, y, width, height, z;
    gboolean visible;
    gboolean controlled_by_automation;
    guint64 order;
    WebKitWebView *web_view;
    WebKitUserContentManager *content;
    struct ViewBackend *backend;
    /* The page's latest frame (premultiplied ARGB32, a copy of its SHM buffer), or NULL; how
     * many frames arrived, and when the last one did (g_get_monotonic_time). */
    cairo_surface_t *frame;
    guint64 frames;
    gint64 last_frame_time;
    /* Key events sent with a wait (KeyWait, view.c), oldest first. */
    GQueue key_waits;
    /* The URL the last navigate asked for; whether its outcome was reported. */
    char *requested_url;
    gboolean outcome_reported;
};

/* The kind named by the protocol's "kind" ("overlay", "tv"), or FALSE. */
gboolean view_kind_parse(const char *name, ViewKind *kind);
const char *view_kind_name(ViewKind kind);

HostView *view_new(Host *host, const char *id, const ViewOptions *options);

/* Closes the page (its document, timers and scripts end) and frees the view. */
void view_free(HostView *view);

void view_navigate(HostView *view, const char *url);

void view_set_rect(HostView *view, int x, int y, int width, int height);

void view_set_focused(HostView *view, gboolean focused);

/* Called once the page saw a key event (delivered), or not within a bounded wait, or never (the view went). */
typedef void (*ViewKeyDone)(gboolean delivered, gpointer data);

/*
 * A key pressed or released. With `done`, it is called once the page's keydown or keyup
 * listeners saw it (host-world.js reports each one): WebKit sends a view's key events one at a
 * time, so a later run-js could otherwise run before an earlier key was handled.
 */
void view_key(HostView *view, guint32 keysym, guint32 hardware_key_code, gboolean pressed, ViewKeyDone done,
              gpointer data);

/* A press and release of `button` at view coordinates. */
void view_click(HostView *view, int x, int y, guint button);

/* Whether the view's latest frame has a pixel that is not fully transparent at view (x, y). */
gboolean view_painted_at(HostView *view, int x, int y);

/* The compositor's tick: lets WebKit render its next frame if it delivered one. */
void view_frame_done(HostView *view);

/* The view as the list-views reply describes it. */
JsonObject *view_describe(HostView *view);
/* A new object of an event or reply about the view: {"viewId": id}. */
JsonObject *view_fields(HostView *view);

#endif
