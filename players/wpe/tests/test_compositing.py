"""The composited screen, measured on screenshots: a view at its rectangle over the video, the
video showing through its transparent parts and blended under its half-transparent ones,
hidden views not drawn, and the z order."""

from __future__ import annotations

import pytest

from host_support import near, pixel

pytestmark = pytest.mark.asyncio

VIEW = {"x": 300, "y": 200, "width": 400, "height": 300}


async def paused_video(host):
    """The clip paused on a frame that is on screen (so that two screenshots see the same video)."""
    await host.wait_event("video-playing")
    await host.request("video-pause")


async def test_a_view_shows_at_its_rectangle_with_the_video_through_its_transparent_parts(host, pages, tmp_path):
    await paused_video(host)
    mark = host.mark()
    await host.create_view("o1", url=pages.url("layers.html"), **VIEW)
    await host.wait_event("load-finished", since=mark, viewId="o1")
    await host.settle("o1")
    video = await host.screenshot(tmp_path / "hidden.png")
    await host.request("show", viewId="o1")
    shown = await host.screenshot(tmp_path / "shown.png")
    x, y = VIEW["x"], VIEW["y"]
    # The opaque box (page 20,20 to 120,70) lands at the view's origin plus its offset, exactly.
    for point in [(x + 20, y + 20), (x + 119, y + 69), (x + 70, y + 45)]:
        assert pixel(shown, *point) == (0, 255, 0), point
    for point in [(x + 19, y + 45), (x + 120, y + 45), (x + 70, y + 19), (x + 70, y + 70)]:
        assert pixel(shown, *point) == pixel(video, *point), point
    # The page's transparent background shows the video unchanged, as does everything outside the view.
    for point in [(x + 300, y + 200), (x + 399, y + 299), (x - 1, y - 1), (x + 400, y + 300), (10, 10)]:
        assert pixel(shown, *point) == pixel(video, *point), point
    # rgba(255, 0, 0, 0.5) over the video: half of each (premultiplied alpha blended once, correctly).
    for point in [(x + 30, y + 110), (x + 110, y + 140)]:
        under = pixel(video, *point)
        expected = (0.5 * 255 + 0.5 * under[0], 0.5 * under[1], 0.5 * under[2])
        assert near(pixel(shown, *point), expected), (point, pixel(shown, *point), expected)
    # The video frame itself is there (not a black screen).
    assert pixel(video, 640, 360) != (0, 0, 0)


async def test_hidden_views_are_not_drawn_and_raise_puts_a_view_on_top(host, pages, tmp_path):
    await paused_video(host)
    mark = host.mark()
    await host.create_view("red", url=pages.url("solid.html?c=ff0000"), x=100, y=100, width=200, height=200,
                           visible=True)
    await host.create_view("blue", url=pages.url("solid.html?c=0000ff"), x=200, y=200, width=200, height=200,
                           visible=True)
    for view in ("red", "blue"):
        await host.wait_event("load-finished", since=mark, viewId=view)
        await host.settle(view)
    stacked = await host.screenshot(tmp_path / "stacked.png")
    assert pixel(stacked, 150, 150) == (255, 0, 0)
    assert pixel(stacked, 250, 250) == (0, 0, 255)  # the later view is on top at equal z
    await host.request("raise", viewId="red")
    raised = await host.screenshot(tmp_path / "raised.png")
    assert pixel(raised, 250, 250) == (255, 0, 0)
    assert pixel(raised, 350, 350) == (0, 0, 255)
    await host.request("hide", viewId="red")
    hidden = await host.screenshot(tmp_path / "hidden.png")
    assert pixel(hidden, 250, 250) == (0, 0, 255)
    assert pixel(hidden, 150, 150) not in [(255, 0, 0), (0, 0, 255)]


async def test_set_rect_moves_and_resizes_a_view(host, pages, tmp_path):
    await paused_video(host)
    mark = host.mark()
    await host.create_view("blue", url=pages.url("solid.html?c=0000ff"), x=0, y=0, width=100, height=100,
                           visible=True)
    await host.wait_event("load-finished", since=mark, viewId="blue")
    await host.request("set-rect", viewId="blue", x=600, y=400, width=300, height=200)
    assert await host.run_js("blue", "[window.innerWidth, window.innerHeight]") == [300, 200]
    await host.settle("blue")
    moved = await host.screenshot(tmp_path / "moved.png")
    assert pixel(moved, 600, 400) == (0, 0, 255)
    assert pixel(moved, 899, 599) == (0, 0, 255)
    assert pixel(moved, 50, 50) != (0, 0, 255)
    assert pixel(moved, 900, 600) != (0, 0, 255)
