"""Each overlay's load outcome, reported once (pure bookkeeping, no I/O).

An overlay's page is expected when the player creates its frame or view; the first outcome
(loaded, failed, or failed for want of a load in time) is the one reported as
``overlay.rendered``, and later ones are ignored, as are outcomes of overlays no longer shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class LoadOutcome:
    """What to report as ``overlay.rendered``."""

    overlay_id: str
    status: str  # "loaded" or "failed"
    reason: Optional[str] = None


class LoadOutcomes:
    def __init__(self) -> None:
        self._expected: set[str] = set()
        self._reported: set[str] = set()

    def expect(self, overlay_id: str) -> None:
        """The overlay's page is being loaded; its outcome will be reported once."""
        self._expected.add(overlay_id)
        self._reported.discard(overlay_id)

    def forget(self, overlay_id: str) -> None:
        """The overlay's frame or view was removed."""
        self._expected.discard(overlay_id)
        self._reported.discard(overlay_id)

    def reset(self) -> None:
        """No overlay at all."""
        self._expected.clear()
        self._reported.clear()

    def is_expected(self, overlay_id: str) -> bool:
        return overlay_id in self._expected

    def outcome(self, overlay_id: str, status: str, reason: Optional[str] = None) -> Optional[LoadOutcome]:
        """The outcome to report, the first time for a shown overlay; None otherwise."""
        if overlay_id not in self._expected or overlay_id in self._reported:
            return None
        self._reported.add(overlay_id)
        return LoadOutcome(overlay_id, status, reason)

    def timed_out(self, overlay_id: str, seconds: float) -> Optional[LoadOutcome]:
        """No load in time: failed, unless an outcome was reported already."""
        return self.outcome(overlay_id, "failed", f"not loaded within {seconds:g} s")
