"""The player's screenshots (``--screenshot-dir``): ``NNNN-what-overlayId.png``, numbered in the
order they were taken so that they sort that way (players/web/README.md lists the names)."""

from __future__ import annotations

import re
from pathlib import Path


class Screenshots:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def next_path(self, what: str, overlay_id: str) -> Path:
        self.count += 1
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{what}-{overlay_id}")
        return self.directory / f"{self.count:04d}-{safe}.png"
