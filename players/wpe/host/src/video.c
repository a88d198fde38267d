#include "video.h"

#include <gst/app/gstappsink.h>
#include <gst/base/gstbasesink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

/* playbin's flags: video only (no audio output, no subtitles). */
#define PLAY_FLAG_VIDEO 0x1

typedef enum {
    PHASE_NONE,
    /* Going to PAUSED; then, with a start position, seeking there. */
    PHASE_PREROLL,
    PHASE_SEEKING,
    PHASE_PLAYING,
    PHASE_PAUSED,
    PHASE_ENDED,
    PHASE_ERROR,
} Phase;

struct Video {
    Host *host;
    GstElement *pipeline;
    GstElement *sink;
    guint bus_watch;
    char *file;
    gboolean loop;
    double start;
    /* Started paused: held on the frame at `start` once there. */
    gboolean start_paused;
    /* A video_seek waits for its frame: video-seeked follows. */
    gboolean seeking;
    Phase phase;
    /* Set by the streaming thread when the sink shows a new frame, cleared by video_draw. */
    gint new_frame;
};

/* {file, position, duration (once known)}. */
static JsonObject *position_fields(Video *video)
{
    JsonObject *fields = json_object_new();
    gint64 position = 0, duration = 0;
    if (video->pipeline && gst_element_query_position(video->pipeline, GST_FORMAT_TIME, &position))
        json_object_set_double_member(fields, "position", (double) position / GST_SECOND);
    else
        json_object_set_double_member(fields, "position", 0);
    if (video->pipeline && gst_element_query_duration(video->pipeline, GST_FORMAT_TIME, &duration))
        json_object_set_double_member(fields, "duration", (double) duration / GST_SECOND);
    json_object_set_string_member(fields, "file", video->file ? video->file : "");
    return fields;
}

/*
 * The frame drawn is the sink's last sample (the one it rendered or, paused, prerolled): the
 * appsink only tells that a frame arrived, and its queue of samples is emptied as it fills.
 */
static GstFlowReturn on_new_sample(GstAppSink *sink, gpointer data)
{
    Video *video = data;
    GstSample *sample = gst_app_sink_try_pull_sample(sink, 0);
    if (sample)
        gst_sample_unref(sample);
    g_atomic_int_set(&video->new_frame, 1);
    return GST_FLOW_OK;
}

static GstFlowReturn on_new_preroll(GstAppSink *sink, gpointer data)
{
    Video *video = data;
    (void) sink;
    g_atomic_int_set(&video->new_frame, 1);
    return GST_FLOW_OK;
}

static void seek(Video *video, double seconds)
{
    gst_element_seek_simple(video->pipeline, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE,
                            (gint64) (seconds * GST_SECOND));
}

static gboolean on_bus_message(GstBus *bus, GstMessage *message, gpointer data)
{
    Video *video = data;
    (void) bus;
    switch (GST_MESSAGE_TYPE(message)) {
    case GST_MESSAGE_ASYNC_DONE:
        if (video->phase == PHASE_PREROLL && video->start > 0) {
            video->phase = PHASE_SEEKING;
            seek(video, video->start);
        } else if (video->phase == PHASE_PREROLL || video->phase == PHASE_SEEKING) {
            if (video->start_paused) {
                video->phase = PHASE_PAUSED;
            } else {
                video->phase = PHASE_PLAYING;
                gst_element_set_state(video->pipeline, GST_STATE_PLAYING);
            }
            if (video->start_paused || video->seeking) {
                video->seeking = FALSE;
                host_emit(video->host, "video-seeked", position_fields(video));
            }
        } else if (video->seeking) {
            video->seeking = FALSE;
            host_emit(video->host, "video-seeked", position_fields(video));
        }
        break;
    case GST_MESSAGE_STATE_CHANGED: {
        GstState old_state, new_state;
        gst_message_parse_state_changed(message, &old_state, &new_state, NULL);
        if (GST_MESSAGE_SRC(message) == GST_OBJECT(video->pipeline) && new_state == GST_STATE_PLAYING
            && old_state != GST_STATE_PLAYING)
            host_emit(video->host, "video-playing", position_fields(video));
        break;
    }
    case GST_MESSAGE_EOS: {
        JsonObject *fields = position_fields(video);
        json_object_set_boolean_member(fields, "looped", video->loop);
        host_emit(video->host, "video-ended", fields);
        if (video->loop)
            seek(video, 0);
        else
            video->phase = PHASE_ENDED;
        break;
    }
    case GST_MESSAGE_ERROR: {
        GError *error = NULL;
        gst_message_parse_error(message, &error, NULL);
        JsonObject *fields = json_object_new();
        json_object_set_string_member(fields, "file", video->file ? video->file : "");
        json_object_set_string_member(fields, "message", error ? error->message : "unknown error");
        g_clear_error(&error);
        host_emit(video->host, "video-error", fields);
        video->phase = PHASE_ERROR;
        gst_element_set_state(video->pipeline, GST_STATE_NULL);
        break;
    }
    default:
        break;
    }
    return G_SOURCE_CONTINUE;
}

Video *video_new(Host *host)
{
    Video *video = g_new0(Video, 1);
    video->host = host;
    return video;
}

static void unload(Video *video)
{
    if (!video->pipeline)
        return;
    gst_element_set_state(video->pipeline, GST_STATE_NULL);
    g_source_remove(video->bus_watch);
    gst_object_unref(video->sink);
    gst_object_unref(video->pipeline);
    video->pipeline = NULL;
    video->sink = NULL;
    video->bus_watch = 0;
    g_clear_pointer(&video->file, g_free);
    video->phase = PHASE_NONE;
    video->seeking = FALSE;
}

gboolean video_play(Video *video, const char *file, gboolean loop, double start, gboolean paused, GError **error)
{
    if (!g_file_test(file, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "no such video file: %s", file);
        return FALSE;
    }
    char *uri = gst_filename_to_uri(file, error);
    if (!uri)
        return FALSE;
    char *description = g_strdup_printf(
        "videoconvert ! videoscale ! video/x-raw,format=BGRx,width=%d,height=%d,pixel-aspect-ratio=1/1"
        " ! appsink name=sink sync=true max-buffers=1 drop=true",
        video->host->width, video->host->height);
    GstElement *bin = gst_parse_bin_from_description(description, TRUE, error);
    g_free(description);
    if (!bin) {
        g_free(uri);
        return FALSE;
    }
    unload(video);
    video->pipeline = gst_element_factory_make("playbin", NULL);
    if (!video->pipeline) {
        gst_object_unref(bin);
        g_free(uri);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "GStreamer's playbin is missing");
        return FALSE;
    }
    video->sink = gst_bin_get_by_name(GST_BIN(bin), "sink");
    GstAppSinkCallbacks callbacks = { .new_sample = on_new_sample, .new_preroll = on_new_preroll };
    gst_app_sink_set_callbacks(GST_APP_SINK(video->sink), &callbacks, video, NULL);
    g_object_set(video->pipeline, "uri", uri, "video-sink", bin, "flags", PLAY_FLAG_VIDEO, NULL);
    g_free(uri);
    GstBus *bus = gst_element_get_bus(video->pipeline);
    video->bus_watch = gst_bus_add_watch(bus, on_bus_message, video);
    gst_object_unref(bus);
    video->file = g_strdup(file);
    video->loop = loop;
    video->start = start;
    video->start_paused = paused;
    video->phase = PHASE_PREROLL;
    gst_element_set_state(video->pipeline, GST_STATE_PAUSED);
    return TRUE;
}

/* How long pausing may wait for the pipeline to hold its frame. */
#define PAUSE_WAIT (500 * GST_MSECOND)

gboolean video_pause(Video *video)
{
    if (!video->pipeline || video->phase == PHASE_ERROR)
        return FALSE;
    gint64 position = 0;
    gboolean known = gst_element_query_position(video->pipeline, GST_FORMAT_TIME, &position);
    video->phase = PHASE_PAUSED;
    gst_element_set_state(video->pipeline, GST_STATE_PAUSED);
    gst_element_get_state(video->pipeline, NULL, NULL, PAUSE_WAIT);
    /* A flushing seek to where it stopped: the sink prerolls that frame and holds it. */
    if (known) {
        seek(video, (double) position / GST_SECOND);
        gst_element_get_state(video->pipeline, NULL, NULL, PAUSE_WAIT);
    }
    return TRUE;
}

gboolean video_seek(Video *video, double position, int loop)
{
    if (!video->pipeline || video->phase == PHASE_ERROR)
        return FALSE;
    if (loop >= 0)
        video->loop = loop != 0;
    video->seeking = TRUE;
    switch (video->phase) {
    case PHASE_PREROLL:
        /* The start seek goes there once prerolled. */
        video->start = position;
        return TRUE;
    case PHASE_ENDED:
        /* As a media element does: a seek after the end leaves it paused there. */
        video->phase = PHASE_PAUSED;
        gst_element_set_state(video->pipeline, GST_STATE_PAUSED);
        break;
    default:
        break;
    }
    seek(video, position);
    return TRUE;
}

gboolean video_resume(Video *video)
{
    if (!video->pipeline || video->phase == PHASE_ERROR)
        return FALSE;
    if (video->phase == PHASE_ENDED)
        seek(video, 0);
    video->phase = PHASE_PLAYING;
    gst_element_set_state(video->pipeline, GST_STATE_PLAYING);
    return TRUE;
}

void video_stop(Video *video)
{
    unload(video);
}

JsonObject *video_status(Video *video)
{
    static const char *const names[] = {
        [PHASE_NONE] = "none",       [PHASE_PREROLL] = "starting", [PHASE_SEEKING] = "starting",
        [PHASE_PLAYING] = "playing", [PHASE_PAUSED] = "paused",    [PHASE_ENDED] = "ended",
        [PHASE_ERROR] = "error",
    };
    JsonObject *fields = position_fields(video);
    json_object_set_string_member(fields, "state", names[video->phase]);
    gint64 duration = 0;
    if (video->pipeline && gst_element_query_duration(video->pipeline, GST_FORMAT_TIME, &duration))
        json_object_set_double_member(fields, "duration", (double) duration / GST_SECOND);
    json_object_set_boolean_member(fields, "loop", video->loop);
    return fields;
}

gboolean video_has_new_frame(Video *video)
{
    return g_atomic_int_get(&video->new_frame) != 0;
}

void video_draw(Video *video, cairo_t *cr, int width, int height)
{
    g_atomic_int_set(&video->new_frame, 0);
    GstSample *sample = video->sink ? gst_base_sink_get_last_sample(GST_BASE_SINK(video->sink)) : NULL;
    if (!sample)
        return;
    GstVideoInfo info;
    GstVideoFrame frame;
    GstCaps *caps = gst_sample_get_caps(sample);
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    if (!caps || !buffer || !gst_video_info_from_caps(&info, caps)
        || !gst_video_frame_map(&frame, &info, buffer, GST_MAP_READ)) {
        gst_sample_unref(sample);
        return;
    }
    int frame_width = GST_VIDEO_FRAME_WIDTH(&frame);
    int frame_height = GST_VIDEO_FRAME_HEIGHT(&frame);
    cairo_surface_t *surface = cairo_image_surface_create_for_data(
        GST_VIDEO_FRAME_PLANE_DATA(&frame, 0), CAIRO_FORMAT_RGB24, frame_width, frame_height,
        GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0));
    cairo_save(cr);
    if (frame_width != width || frame_height != height)
        cairo_scale(cr, (double) width / frame_width, (double) height / frame_height);
    cairo_set_source_surface(cr, surface, 0, 0);
    cairo_paint(cr);
    cairo_restore(cr);
    cairo_surface_destroy(surface);
    gst_video_frame_unmap(&frame);
    gst_sample_unref(sample);
}

void video_free(Video *video)
{
    unload(video);
    g_free(video);
}
