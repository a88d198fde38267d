// GValueArray is deprecated but is what the `level` element posts.
#define GLIB_DISABLE_DEPRECATION_WARNINGS
#include "CGStreamerShims.h"

gboolean cgst_level_message_rms(const GstStructure *structure, gdouble *rms) {
    const GValue *list = gst_structure_get_value(structure, "rms");
    if (list == NULL || !G_VALUE_HOLDS(list, G_TYPE_VALUE_ARRAY)) return FALSE;
    GValueArray *array = g_value_get_boxed(list);
    if (array == NULL || array->n_values == 0) return FALSE;
    gdouble loudest = -G_MAXDOUBLE;
    for (guint i = 0; i < array->n_values; i++) {
        const GValue *channel = g_value_array_get_nth(array, i);
        if (channel != NULL && G_VALUE_HOLDS_DOUBLE(channel)) loudest = MAX(loudest, g_value_get_double(channel));
    }
    if (loudest == -G_MAXDOUBLE) return FALSE;
    *rms = loudest;
    return TRUE;
}

typedef struct {
    GstElement *receiver;
    gboolean attached;
} ReceiverAttachment;

static void receiver_attachment_free(gpointer data, GClosure *closure) {
    (void)closure;
    ReceiverAttachment *attachment = data;
    gst_object_unref(attachment->receiver);
    g_free(attachment);
}

static void on_pad_added(GstElement *webrtc, GstPad *pad, gpointer data) {
    (void)webrtc;
    ReceiverAttachment *attachment = data;
    if (attachment->attached || GST_PAD_DIRECTION(pad) != GST_PAD_SRC) return;
    attachment->attached = TRUE;
    gst_element_set_locked_state(attachment->receiver, FALSE);
    gst_element_sync_state_with_parent(attachment->receiver);
    GstPad *sink = gst_element_get_static_pad(attachment->receiver, "sink");
    if (sink == NULL) return;
    GstPadLinkReturn linked = gst_pad_link(pad, sink);
    if (linked != GST_PAD_LINK_OK) {
        GST_ELEMENT_ERROR(attachment->receiver, CORE, NEGOTIATION,
                          ("cannot link the received audio: %s", gst_pad_link_get_name(linked)), (NULL));
    }
    gst_object_unref(sink);
}

void cgst_attach_receiver_on_pad_added(GstElement *webrtc, GstElement *receiver) {
    ReceiverAttachment *attachment = g_new0(ReceiverAttachment, 1);
    attachment->receiver = gst_object_ref(receiver);
    g_signal_connect_data(webrtc, "pad-added", G_CALLBACK(on_pad_added), attachment, receiver_attachment_free, 0);
}
