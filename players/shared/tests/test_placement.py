"""Placement geometry (playercore.placement), the rule of docs/players.md, section 3."""

from __future__ import annotations

import pytest

from playercore.placement import Box, overlay_box


def test_the_nine_locations_of_a_1920_by_1080_area():
    expected = {0: (0, 0), 1: (576, 0), 2: (1152, 0), 3: (0, 378), 4: (576, 378), 5: (1152, 378),
                6: (0, 756), 7: (576, 756), 8: (1152, 756)}
    for location, corner in expected.items():
        box = overlay_box({"location": location, "widthPct": 40, "heightPct": 30}, 1920, 1080)
        assert (box.x, box.y, box.width, box.height) == (*corner, 768, 324), location


def test_out_of_range_values_are_clamped_and_junk_is_zero():
    assert overlay_box({"location": 12, "widthPct": 150, "heightPct": -5}, 1280, 720) == Box(0, 720, 1280, 0)
    assert overlay_box({"location": -3, "widthPct": 50, "heightPct": 50}, 1280, 720) == Box(0, 0, 640, 360)
    assert overlay_box({"location": "x", "widthPct": None, "heightPct": float("nan")}, 1280, 720) == Box(0, 0, 0, 0)
    assert overlay_box(None, 1280, 720) == Box(0, 0, 0, 0)


def test_pixels_and_percent():
    box = overlay_box({"location": 4, "widthPct": 33, "heightPct": 33}, 1280, 720)
    left, top, width, height = box.pixels()
    assert (left, top) == (round(box.x), round(box.y))
    assert left + width == round(box.x + box.width) and top + height == round(box.y + box.height)
    assert box.percent_of(1280, 720) == pytest.approx({"left": 33.5, "top": 33.5, "width": 33.0, "height": 33.0})
