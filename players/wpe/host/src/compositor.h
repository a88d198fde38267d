/*
 * The composited screen: the video's current frame, then every visible view's latest frame in
 * z order (ties: the view created first is under), each drawn OVER what is below it. WebKit's
 * SHM frames and cairo's ARGB32 are both premultiplied, so a half-transparent pixel of a page
 * blends with the video exactly as it would in the engine.
 */
#ifndef WPE_HOST_COMPOSITOR_H
#define WPE_HOST_COMPOSITOR_H

#include "host.h"

#include <cairo.h>

/* Draws the screen into `target` (an image surface of the host's size). */
void compositor_draw(Host *host, cairo_surface_t *target);

/* Composites a frame now and writes it as a PNG at `path` (written beside it, then renamed). */
gboolean compositor_write_png(Host *host, const char *path, GError **error);

#endif
