"""Where an overlay goes (docs/players.md, section 3): ``placement`` ``{location, widthPct,
heightPct}`` in the video area, which is the whole screen in the reference players.

``location`` 0-8 counts row-major from the top-left (column = location mod 3, row = location
div 3): column 0 touches the left edge, 1 is centred, 2 touches the right edge, and the same for
rows from the top. Widths and heights are percentages of the area's, each on its own axis. No
margin is added (the templates leave their own); out-of-range values are clamped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Box:
    """A rectangle in pixels of the screen (fractions allowed)."""

    x: float
    y: float
    width: float
    height: float

    def pixels(self) -> tuple[int, int, int, int]:
        """The box on whole pixels: its edges rounded, so that neighbours neither overlap nor gap."""
        left, top = round(self.x), round(self.y)
        return left, top, round(self.x + self.width) - left, round(self.y + self.height) - top

    def percent_of(self, width: float, height: float) -> dict[str, float]:
        """``{left, top, width, height}`` in percent of a screen of that size (for CSS)."""
        return {"left": 100 * self.x / width, "top": 100 * self.y / height,
                "width": 100 * self.width / width, "height": 100 * self.height / height}


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def overlay_box(placement: Any, width: float, height: float) -> Box:
    """The rectangle of ``placement`` in a video area of ``width`` x ``height`` at (0, 0)."""
    placement = placement if isinstance(placement, dict) else {}
    location = min(8, max(0, math.floor(_number(placement.get("location")))))
    share_w = min(100.0, max(0.0, _number(placement.get("widthPct")))) / 100
    share_h = min(100.0, max(0.0, _number(placement.get("heightPct")))) / 100
    box_w, box_h = width * share_w, height * share_h
    column, row = location % 3, location // 3
    return Box(column * (width - box_w) / 2, row * (height - box_h) / 2, box_w, box_h)
