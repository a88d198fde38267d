"""players/shared/contact-sheet: which screenshots it picks (--match, --skip), seen in the size of
the grid it writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PIL import Image

SCRIPT = Path(__file__).resolve().parents[1] / "contact-sheet"
WIDTH, GAP, CAPTION = 480, 8, 26  # one picture's width, the gaps and a caption, as the script draws them


def _sheet(folder: Path, *options: str) -> tuple[int, int]:
    output = folder / "out-sheet.png"
    subprocess.run([sys.executable, str(SCRIPT), *options, str(folder), str(output)], check=True,
                   capture_output=True, timeout=60)
    with Image.open(output) as sheet:
        return sheet.size


def _pictures(columns: int, rows: int) -> tuple[int, int]:
    return columns * (WIDTH + GAP) + GAP, rows * (WIDTH * 9 // 16 + CAPTION + GAP) + GAP


def test_match_and_skip_pick_the_screenshots(tmp_path: Path) -> None:
    names = ["0001-reveal-ov-1", "0002-voice-talking-7", "0003-voice-talking-9", "0004-playback-play-f1-e1",
             "0005-voice-joined-2026"]
    for name in names:
        Image.new("RGB", (1280, 720), "#345").save(tmp_path / f"{name}.png")
    assert _sheet(tmp_path) == _pictures(3, 2)
    assert _sheet(tmp_path, "--skip", "voice-talking") == _pictures(3, 1)
    assert _sheet(tmp_path, "--match", "voice-talking") == _pictures(2, 1)
    assert _sheet(tmp_path, "--match", "voice-", "--skip", "voice-joined") == _pictures(2, 1)
    assert _sheet(tmp_path, "--skip", "voice-", "--skip", "reveal") == _pictures(1, 1)
