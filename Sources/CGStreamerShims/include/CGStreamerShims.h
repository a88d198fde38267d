#ifndef C_GSTREAMER_SHIMS_H
#define C_GSTREAMER_SHIMS_H

#include <gst/gst.h>
#include <gst/sdp/sdp.h>

// ---- The few parts of libgstwebrtc-1.0 (GStreamer 1.22) the media process uses, declared by hand:
// its headers come only with libgstreamer-plugins-bad1.0-dev (~825 MB with what it pulls in).
// These match gst-plugins-bad 1.22's gst-libs/gst/webrtc/webrtc_fwd.h and rtcsessiondescription.h.

/// GstWebRTCSDPType.
typedef enum {
    GST_WEBRTC_SDP_TYPE_OFFER = 1,
    GST_WEBRTC_SDP_TYPE_PRANSWER,
    GST_WEBRTC_SDP_TYPE_ANSWER,
    GST_WEBRTC_SDP_TYPE_ROLLBACK
} GstWebRTCSDPType;

/// GstWebRTCSessionDescription: a boxed type (gst_webrtc_session_description_get_type).
typedef struct _GstWebRTCSessionDescription {
    GstWebRTCSDPType type;
    GstSDPMessage *sdp;
} GstWebRTCSessionDescription;

GType gst_webrtc_session_description_get_type(void);
/// Takes ownership of `sdp`.
GstWebRTCSessionDescription *gst_webrtc_session_description_new(GstWebRTCSDPType type, GstSDPMessage *sdp);
void gst_webrtc_session_description_free(GstWebRTCSessionDescription *desc);

// ---- GType macros Swift cannot import.

static inline GType cgst_type_boolean(void) { return G_TYPE_BOOLEAN; }
static inline GType cgst_type_string(void) { return G_TYPE_STRING; }
static inline GType cgst_type_uint(void) { return G_TYPE_UINT; }
static inline GType cgst_type_uint64(void) { return G_TYPE_UINT64; }
static inline GType cgst_type_caps(void) { return GST_TYPE_CAPS; }
/// G_OBJECT_TYPE.
static inline GType cgst_object_type(gpointer object) { return G_OBJECT_TYPE(object); }
/// G_TYPE_FUNDAMENTAL(type) == G_TYPE_ENUM.
static inline gboolean cgst_type_is_enum(GType type) { return G_TYPE_FUNDAMENTAL(type) == G_TYPE_ENUM; }
/// GST_MESSAGE_SRC's name (borrowed; NULL without a source).
static inline const gchar *cgst_message_source_name(GstMessage *message) {
    return GST_MESSAGE_SRC(message) ? GST_OBJECT_NAME(GST_MESSAGE_SRC(message)) : NULL;
}

// ---- Helpers where C is unavoidable.

/// The loudest channel's RMS in dB (<= 0) of a `level` element message's "rms" list (a
/// GValueArray, deprecated since GLib 2.32 but what `level` 1.22 posts). FALSE when absent.
gboolean cgst_level_message_rms(const GstStructure *structure, gdouble *rms);

/// On the first source pad `webrtc` adds: unlocks the state of `receiver` (a bin in the same
/// pipeline, kept out of its state changes with gst_element_set_locked_state until now), brings
/// it to the pipeline's state and links the pad to its "sink" pad. GStreamer requires the link
/// inside the "pad-added" handler, on webrtcbin's thread, before data flows: nothing else happens
/// there. A failed link is posted on the bus as an error of `receiver`.
void cgst_attach_receiver_on_pad_added(GstElement *webrtc, GstElement *receiver);

#endif
