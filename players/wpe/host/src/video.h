/*
 * The video under the views: GStreamer's playbin decoding a file into an appsink (BGRx at the
 * screen's size), played once or in a loop from a given position. The compositor draws its
 * newest frame; playing, ended and error are reported as events.
 */
#ifndef WPE_HOST_VIDEO_H
#define WPE_HOST_VIDEO_H

#include "host.h"

#include <cairo.h>

Video *video_new(Host *host);

/* Starts `file` from `start` seconds (replacing what played before); with `paused`, holds the
 * frame there (video-seeked says when) until video_resume. */
gboolean video_play(Video *video, const char *file, gboolean loop, double start, gboolean paused, GError **error);
/* Seeks the loaded video to `position`, playing on or holding the frame there as it was (after
 * its end: paused there); video-seeked follows once the frame is there. `loop` is 0 or 1 to
 * change whether it loops, -1 to leave it. FALSE when nothing is loaded. */
gboolean video_seek(Video *video, double position, int loop);
/* Pause and resume; FALSE when nothing is loaded. */
gboolean video_pause(Video *video);
gboolean video_resume(Video *video);
/* Stops and unloads: the screen's background is black again. */
void video_stop(Video *video);

/* {state, file, position, duration, loop}: state is none, starting, playing, paused, ended or error. */
JsonObject *video_status(Video *video);

/* Whether a frame arrived since the last video_draw (the window repaints only then). */
gboolean video_has_new_frame(Video *video);

/* Paints the newest frame over (0, 0, width, height); nothing before the first one. */
void video_draw(Video *video, cairo_t *cr, int width, int height);

void video_free(Video *video);

#endif
