#include "window.h"

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <cairo-xlib.h>
#include <glib-unix.h>

struct HostWindow {
    Host *host;
    Display *display;
    Window window;
    Atom delete_window;
    cairo_surface_t *surface;
    int width;
    int height;
    guint watch;
};

/* The window's point (x, y) on the host's screen, which the window shows scaled. */
static void to_screen(HostWindow *window, int x, int y, int *screen_x, int *screen_y)
{
    *screen_x = window->width > 0 ? x * window->host->width / window->width : x;
    *screen_y = window->height > 0 ? y * window->host->height / window->height : y;
}

/* X's buttons are 1 left, 2 middle, 3 right; WPE's are 1 left, 2 right, 3 middle. */
static guint wpe_button(unsigned int x_button)
{
    return x_button == 3 ? 2 : x_button == 2 ? 3 : 1;
}

static void handle(HostWindow *window, XEvent *event)
{
    switch (event->type) {
    case KeyPress:
    case KeyRelease: {
        KeySym keysym = XLookupKeysym(&event->xkey, (event->xkey.state & ShiftMask) ? 1 : 0);
        if (keysym != NoSymbol)
            host_key(window->host, (guint32) keysym, event->xkey.keycode, event->type == KeyPress);
        break;
    }
    case ButtonPress: {
        if (event->xbutton.button > 3)
            break;
        int x, y;
        to_screen(window, event->xbutton.x, event->xbutton.y, &x, &y);
        host_click(window->host, x, y, wpe_button(event->xbutton.button));
        break;
    }
    case ConfigureNotify:
        window->width = event->xconfigure.width;
        window->height = event->xconfigure.height;
        cairo_xlib_surface_set_size(window->surface, window->width, window->height);
        host_damage(window->host);
        break;
    case Expose:
        host_damage(window->host);
        break;
    case ClientMessage:
        if ((Atom) event->xclient.data.l[0] == window->delete_window) {
            host_emit(window->host, "window-closed", NULL);
            host_quit(window->host);
        }
        break;
    default:
        break;
    }
}

void window_dispatch(HostWindow *window)
{
    while (XPending(window->display)) {
        XEvent event;
        XNextEvent(window->display, &event);
        handle(window, &event);
    }
}

static gboolean on_x_events(int fd, GIOCondition condition, gpointer data)
{
    (void) fd;
    (void) condition;
    window_dispatch(data);
    return G_SOURCE_CONTINUE;
}

HostWindow *window_open(Host *host, int *screen_width, int *screen_height)
{
    Display *display = XOpenDisplay(NULL);
    if (!display)
        return NULL;
    int screen = DefaultScreen(display);
    HostWindow *window = g_new0(HostWindow, 1);
    window->host = host;
    window->display = display;
    window->width = DisplayWidth(display, screen);
    window->height = DisplayHeight(display, screen);
    *screen_width = window->width;
    *screen_height = window->height;
    window->window = XCreateSimpleWindow(display, RootWindow(display, screen), 0, 0, (unsigned) window->width,
                                         (unsigned) window->height, 0, BlackPixel(display, screen),
                                         BlackPixel(display, screen));
    XStoreName(display, window->window, "wpe-host");
    XSelectInput(display, window->window,
                 KeyPressMask | KeyReleaseMask | ButtonPressMask | StructureNotifyMask | ExposureMask);
    window->delete_window = XInternAtom(display, "WM_DELETE_WINDOW", False);
    XSetWMProtocols(display, window->window, &window->delete_window, 1);
    /* Full screen under a window manager; without one the window already covers the screen. */
    Atom state = XInternAtom(display, "_NET_WM_STATE", False);
    Atom fullscreen = XInternAtom(display, "_NET_WM_STATE_FULLSCREEN", False);
    XChangeProperty(display, window->window, state, XA_ATOM, 32, PropModeReplace, (unsigned char *) &fullscreen, 1);
    /* No pointer drawn over the screen (a set-top box has none); clicks still arrive. */
    static char empty[1];
    Pixmap blank = XCreateBitmapFromData(display, window->window, empty, 1, 1);
    XColor black = { 0 };
    Cursor invisible = XCreatePixmapCursor(display, blank, blank, &black, &black, 0, 0);
    XDefineCursor(display, window->window, invisible);
    XFreeCursor(display, invisible);
    XFreePixmap(display, blank);
    XMapRaised(display, window->window);
    window->surface = cairo_xlib_surface_create(display, window->window, DefaultVisual(display, screen),
                                                window->width, window->height);
    XFlush(display);
    window->watch = g_unix_fd_add(ConnectionNumber(display), G_IO_IN, on_x_events, window);
    return window;
}

void window_present(HostWindow *window, cairo_surface_t *frame)
{
    cairo_t *cr = cairo_create(window->surface);
    if (window->width != window->host->width || window->height != window->host->height)
        cairo_scale(cr, (double) window->width / window->host->width, (double) window->height / window->host->height);
    cairo_set_source_surface(cr, frame, 0, 0);
    cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
    cairo_paint(cr);
    cairo_destroy(cr);
    cairo_surface_flush(window->surface);
    XFlush(window->display);
}

void window_free(HostWindow *window)
{
    g_source_remove(window->watch);
    cairo_surface_destroy(window->surface);
    XDestroyWindow(window->display, window->window);
    XCloseDisplay(window->display);
    g_free(window);
}
