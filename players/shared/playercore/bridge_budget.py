"""How much of each overlay's bridge traffic may wait for the daemon (pure bookkeeping, no I/O).

A page posts through the IOS object as fast as it likes, and the player's calls to the daemon go
out one at a time, in order: without a bound, one page's flood would hold back every later call
(the next overlay's `overlay.attached` included). So an overlay has at most ``MAX_WAITING`` posts,
and ``MAX_WAITING_BYTES`` of them, queued or in flight; past that its posts are dropped until the
daemon has answered some. A post over ``MAX_POST_BYTES`` is refused at once: templates post a few hundred
bytes, and that bound, even with every character escaped in JSON (six bytes at most), keeps the
request under the daemon's 1 MiB line limit (docs/ipc.md, "Limits").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

MAX_POST_BYTES = 64 << 10
MAX_WAITING = 16
MAX_WAITING_BYTES = 256 << 10


@dataclass
class _Traffic:
    waiting: int = 0
    waiting_bytes: int = 0
    dropped: int = 0
    refused: int = 0


class BridgeBudget:
    """Admits or drops each overlay's posts. The notes it returns are for the log: the first,
    tenth, hundredth, ... post dropped and refused, and the totals when the overlay goes."""

    def __init__(self) -> None:
        self._overlays: dict[str, _Traffic] = {}

    def admit(self, overlay_id: str, size: int) -> tuple[bool, Optional[str]]:
        """A post of ``size`` bytes: whether to send it, and a note."""
        traffic = self._overlays.setdefault(overlay_id, _Traffic())
        if size > MAX_POST_BYTES:
            traffic.refused += 1
            return False, (f"overlay {overlay_id}: refused a bridge post of {size} bytes (at most "
                           f"{MAX_POST_BYTES >> 10} KiB; {traffic.refused} so far)") \
                if math.log10(traffic.refused).is_integer() else None
        if traffic.waiting >= MAX_WAITING or traffic.waiting_bytes + size > MAX_WAITING_BYTES:
            traffic.dropped += 1
            return False, (f"overlay {overlay_id}: more bridge posts than the player queues ({MAX_WAITING} "
                           f"or {MAX_WAITING_BYTES >> 10} KiB waiting for the daemon): dropped "
                           f"{traffic.dropped} so far") if math.log10(traffic.dropped).is_integer() else None
        traffic.waiting += 1
        traffic.waiting_bytes += size
        return True, None

    def answered(self, overlay_id: str, size: int) -> None:
        """The daemon answered an admitted post (or the call failed)."""
        traffic = self._overlays.get(overlay_id)
        if traffic is not None:
            traffic.waiting -= 1
            traffic.waiting_bytes -= size

    def forget(self, overlay_id: str) -> Optional[str]:
        """The overlay left the screen: its totals, if anything was dropped or refused."""
        traffic = self._overlays.pop(overlay_id, None)
        if traffic is None or not (traffic.dropped or traffic.refused):
            return None
        return (f"overlay {overlay_id}: {traffic.dropped} bridge posts dropped and {traffic.refused} "
                "refused in all")

    def reset(self) -> None:
        """A new daemon connection: nothing waits any more."""
        self._overlays.clear()
