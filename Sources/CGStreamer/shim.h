// GStreamer core and its SDP library (Debian's libgstreamer1.0-dev, libgstreamer-plugins-base1.0-dev).
#include <gst/gst.h>
#include <gst/sdp/sdp.h>
