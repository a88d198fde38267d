"""The pure bookkeeping of overlay frames (webplayer.frames), without a browser."""

from __future__ import annotations

from webplayer.frames import LoadOutcome, OverlayFrames


def test_a_committed_frame_named_after_its_overlay_reports_loaded_once():
    frames = OverlayFrames()
    frames.expect("ov-1")
    frames.document_response("F1", 200)
    frames.frame_committed("S1", "F1", "ov-1", None)
    assert frames.overlay_of("S1") == "ov-1" and frames.session_of("ov-1") == "S1"
    assert frames.frame_loaded("S1") == LoadOutcome("ov-1", "loaded")
    assert frames.frame_loaded("S1") is None
    assert frames.timed_out("ov-1", 20) is None


def test_error_pages_and_http_errors_are_failures():
    frames = OverlayFrames()
    frames.expect("ov-1")
    frames.frame_committed("S1", "F1", "ov-1", "http://127.0.0.1:9/x.html")
    outcome = frames.frame_loaded("S1")
    assert outcome is not None and outcome.status == "failed"
    assert "http://127.0.0.1:9/x.html" in (outcome.reason or "")
    frames.expect("ov-2")
    frames.document_response("F2", 404)
    frames.frame_committed("S2", "F2", "ov-2", None)
    assert frames.frame_loaded("S2") == LoadOutcome("ov-2", "failed", "HTTP 404")


def test_frames_of_unknown_overlays_are_ignored_and_the_first_name_sticks():
    frames = OverlayFrames()
    frames.frame_committed("S9", "F9", "not-an-overlay", None)
    assert frames.overlay_of("S9") is None and frames.frame_loaded("S9") is None
    frames.expect("ov-1")
    frames.frame_committed("S1", "F1", "ov-1", None)
    frames.frame_committed("S1", "F1", "ov-2", None)  # the page renamed its window and navigated
    assert frames.overlay_of("S1") == "ov-1"


def test_timeout_and_removal():
    frames = OverlayFrames()
    frames.expect("ov-1")
    assert frames.timed_out("ov-1", 20) == LoadOutcome("ov-1", "failed", "not loaded within 20 s")
    frames.expect("ov-2")
    frames.frame_committed("S2", "F2", "ov-2", None)
    frames.forget("ov-2")
    assert frames.frame_loaded("S2") is None and frames.session_of("ov-2") is None
    frames.expect("ov-3")
    frames.frame_committed("S3", "F3", "ov-3", None)
    frames.session_detached("S3")
    assert frames.session_of("ov-3") is None


def test_reset_forgets_every_frame():
    frames = OverlayFrames()
    frames.expect("ov-1")
    frames.frame_committed("S1", "F1", "ov-1", None)
    frames.reset()  # the TV page was loaded again
    assert frames.overlay_of("S1") is None and frames.session_of("ov-1") is None
    assert frames.timed_out("ov-1", 20) is None
    frames.expect("ov-1")
    frames.frame_committed("S2", "F2", "ov-1", None)
    assert frames.frame_loaded("S2") == LoadOutcome("ov-1", "loaded")
