/*
 * With a display: a full-screen X11 window showing the composited screen (scaled to the
 * window), whose key presses are the remote's keys (sent to the focused view) and whose
 * clicks go to the view under the pointer. Closing the window quits the host.
 */
#ifndef WPE_HOST_WINDOW_H
#define WPE_HOST_WINDOW_H

#include "host.h"

#include <cairo.h>

/* Opens the window on $DISPLAY, or returns NULL when there is no display to open. */
HostWindow *window_open(Host *host, int *screen_width, int *screen_height);

/* Shows `frame` (an image of the host's size). */
void window_present(HostWindow *window, cairo_surface_t *frame);

/* Handles the X events already queued (Xlib may read them while drawing). */
void window_dispatch(HostWindow *window);

void window_free(HostWindow *window);

#endif
