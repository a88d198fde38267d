#include "compositor.h"

#include "video.h"
#include "view.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>

static gint by_stacking_order(gconstpointer a, gconstpointer b)
{
    const HostView *left = *(HostView *const *) a;
    const HostView *right = *(HostView *const *) b;
    if (left->z != right->z)
        return left->z < right->z ? -1 : 1;
    return left->order < right->order ? -1 : left->order > right->order;
}

void compositor_draw(Host *host, cairo_surface_t *target)
{
    cairo_t *cr = cairo_create(target);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_paint(cr);
    if (host->video)
        video_draw(host->video, cr, host->width, host->height);
    GPtrArray *stack = g_ptr_array_new();
    for (guint i = 0; i < host->views->len; i++) {
        HostView *view = g_ptr_array_index(host->views, i);
        if (view->visible && view->frame)
            g_ptr_array_add(stack, view);
    }
    g_ptr_array_sort(stack, by_stacking_order);
    for (guint i = 0; i < stack->len; i++) {
        HostView *view = g_ptr_array_index(stack, i);
        cairo_save(cr);
        /* A frame WebKit rendered before a resize may be larger than the view: clip it. */
        cairo_rectangle(cr, view->x, view->y, view->width, view->height);
        cairo_clip(cr);
        cairo_set_source_surface(cr, view->frame, view->x, view->y);
        cairo_set_operator(cr, CAIRO_OPERATOR_OVER);
        cairo_paint(cr);
        cairo_restore(cr);
    }
    g_ptr_array_free(stack, TRUE);
    cairo_destroy(cr);
    cairo_surface_flush(target);
}

gboolean compositor_write_png(Host *host, const char *path, GError **error)
{
    cairo_surface_t *frame = cairo_image_surface_create(CAIRO_FORMAT_RGB24, host->width, host->height);
    compositor_draw(host, frame);
    char *partial = g_strconcat(path, ".partial", NULL);
    cairo_status_t status = cairo_surface_write_to_png(frame, partial);
    cairo_surface_destroy(frame);
    gboolean written = status == CAIRO_STATUS_SUCCESS && g_rename(partial, path) == 0;
    if (!written) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot write %s: %s", path,
                    status != CAIRO_STATUS_SUCCESS ? cairo_status_to_string(status) : g_strerror(errno));
        g_unlink(partial);
    }
    g_free(partial);
    return written;
}
