"""Which DevTools session renders which overlay, and whether its page loaded.

Every overlay frame comes from another site than the TV page, so Chromium (``--site-per-process``)
gives it its own target; the player attaches to it before it runs. The frame's ``name`` is the
overlay id (the TV page sets it on the iframe), read from the frame's first commit, which
happens before any script of the overlay can change it. A load fails when the document answers
with HTTP 400 or more, or when Chromium commits an error page instead (``unreachableUrl``:
connection refused, DNS, invalid response, ...); it succeeds on the frame's load event otherwise.
Pure bookkeeping: the DevTools events come in, outcomes come out.
"""

from __future__ import annotations

from typing import Optional

from playercore.outcomes import LoadOutcome, LoadOutcomes


class OverlayFrames:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """No frame at all (at the start, and when the TV page was loaded again)."""
        self._outcomes = LoadOutcomes()
        self._session_overlay: dict[str, str] = {}
        self._overlay_session: dict[str, str] = {}
        self._session_frame: dict[str, str] = {}
        self._http_status: dict[str, int] = {}
        self._failure: dict[str, str] = {}

    def expect(self, overlay_id: str) -> None:
        """An overlay's frame was created; its outcome will be reported once."""
        self._outcomes.expect(overlay_id)
        self._failure.pop(overlay_id, None)

    def forget(self, overlay_id: str) -> None:
        """The overlay's frame was removed."""
        self._outcomes.forget(overlay_id)
        self._failure.pop(overlay_id, None)
        session = self._overlay_session.pop(overlay_id, None)
        if session is not None:
            self._session_overlay.pop(session, None)

    def document_response(self, frame_id: str, status: int) -> None:
        """The HTTP status of a frame's document (seen on the TV page's session)."""
        self._http_status[frame_id] = status

    def frame_committed(self, session_id: str, frame_id: str, name: str,
                        unreachable_url: Optional[str]) -> None:
        """A child target's main frame committed a document."""
        self._session_frame[session_id] = frame_id
        overlay_id = self._session_overlay.get(session_id)
        if overlay_id is None:
            if not self._outcomes.is_expected(name):
                return
            overlay_id = name
            self._session_overlay[session_id] = overlay_id
            self._overlay_session[overlay_id] = session_id
        status = self._http_status.pop(frame_id, None)
        if unreachable_url:
            self._failure[overlay_id] = f"the page could not be loaded: {unreachable_url}"
        elif status is not None and status >= 400:
            self._failure[overlay_id] = f"HTTP {status}"

    def frame_loaded(self, session_id: str) -> Optional[LoadOutcome]:
        """A child target's load event: the outcome, the first time for its overlay."""
        overlay_id = self._session_overlay.get(session_id)
        if overlay_id is None:
            return None
        failure = self._failure.get(overlay_id)
        return self._outcomes.outcome(overlay_id, "failed" if failure else "loaded", failure)

    def timed_out(self, overlay_id: str, seconds: float) -> Optional[LoadOutcome]:
        """No load event in time: failed, unless an outcome was reported already."""
        return self._outcomes.timed_out(overlay_id, seconds)

    def session_detached(self, session_id: str) -> None:
        overlay_id = self._session_overlay.pop(session_id, None)
        self._session_frame.pop(session_id, None)
        if overlay_id is not None and self._overlay_session.get(overlay_id) == session_id:
            del self._overlay_session[overlay_id]

    def overlay_of(self, session_id: Optional[str]) -> Optional[str]:
        return self._session_overlay.get(session_id) if session_id else None

    def session_of(self, overlay_id: str) -> Optional[str]:
        return self._overlay_session.get(overlay_id)
