"""The demo viewer (``--autopilot``): Enter on each revealed overlay a moment after it shows, Yes
to a bet and OK to the other dialogs, and a click on each predict/lucky button once it lights up."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .engine import Engine

DELAY = 1.0


class Autopilot:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._tapped: set[str] = set()

    async def answer(self, overlay_id: str, still_shown: Callable[[], bool]) -> None:
        """A moment after a reveal, Enter on what has the focus (the overlay's first choice)."""
        await asyncio.sleep(DELAY)
        if still_shown():
            await self.engine.press("Enter")

    async def dialog(self, what: str) -> None:
        """A bet's dialog: left from "No" to "Yes", then Enter; any other dialog: Enter."""
        for key in (["ArrowLeft"] if what == "confirm" else []) + ["Enter"]:
            await asyncio.sleep(DELAY / 2)
            await self.engine.press(key)

    def should_tap(self, button: dict[str, Any]) -> bool:
        """Whether a ``predict.button`` is one to tap: shown, lit, and not tapped before."""
        timeline = str(button.get("timelineId", ""))
        if not button.get("visible") or button.get("image") != "power" or timeline in self._tapped:
            return False
        self._tapped.add(timeline)
        return True

    async def tap(self, timeline: str) -> None:
        """Clicks the timeline's button with the mouse, where the TV page drew it."""
        await asyncio.sleep(DELAY / 2)
        box = await self.engine.tv("buttonBox", timeline)
        if box:
            await self.engine.click(box[0] + box[2] / 2, box[1] + box[3] / 2)
