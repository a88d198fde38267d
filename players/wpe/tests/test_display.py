"""With $DISPLAY: the host opens a full-screen window (here on an Xvfb of the test's own) that
shows the composited screen at the display's size, and the window's keys and clicks are the
remote's (sent with xdotool, as X input)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from host_support import REMOTE, pixel
from wpehost import SPATIAL_SCRIPT, WpeHost, alive

pytestmark = pytest.mark.asyncio

SCREEN = (1024, 576)


@pytest.fixture
def display() -> Iterator[str]:
    """An Xvfb server on a free display number (Xvfb picks it: -displayfd)."""
    read_end, write_end = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24",
                               "-nolisten", "tcp"], pass_fds=(write_end,), stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as announced:
        number = announced.readline().strip()
    try:
        assert number, "Xvfb did not start"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(10)


@pytest_asyncio.fixture
async def shown(display, clip, tmp_path):
    environment = dict(os.environ, DISPLAY=display)
    host = await WpeHost.start(video=clip, env=environment, stderr=(tmp_path / "host.log").open("wb"))
    processes: list[int] = []
    try:
        yield host, environment
        processes = host.processes()
    finally:
        status = await host.stop()
    assert status == 0
    assert alive(processes) == []


def x_input(environment: dict[str, str], *arguments: str) -> None:
    subprocess.run(["xdotool", *arguments], env=environment, check=True, timeout=10)


def grab(environment: dict[str, str], path: Path) -> Path:
    """The X screen as a PNG (ffmpeg's x11grab)."""
    subprocess.run(["ffmpeg", "-loglevel", "error", "-nostdin", "-y", "-f", "x11grab", "-video_size",
                    f"{SCREEN[0]}x{SCREEN[1]}", "-i", environment["DISPLAY"], "-frames:v", "1", str(path)],
                   check=True, timeout=30)
    return path


async def test_the_window_shows_the_screen_and_its_keys_and_clicks_are_the_remotes(shown, pages, tmp_path):
    host, environment = shown
    assert host.ready["headless"] is False
    assert (host.ready["width"], host.ready["height"]) == SCREEN
    mark = host.mark()
    await host.create_view("o1", url=pages.url("buttons.html"), visible=True, x=100, y=100, width=400, height=300,
                           scripts=[{"file": str(SPATIAL_SCRIPT)}, {"source": REMOTE}])
    await host.wait_event("load-finished", since=mark, viewId="o1")
    await host.request("focus", viewId="o1")
    await host.settle("o1")
    mark = host.mark()
    await asyncio.to_thread(x_input, environment, "key", "Right", "Right", "Return")
    assert (await host.wait_event("ios-message", since=mark, viewId="o1"))["body"] == "clicked b"
    mark = host.mark()
    await asyncio.to_thread(x_input, environment, "mousemove", "150", "130", "click", "1")  # button A
    assert (await host.wait_event("ios-message", since=mark, viewId="o1"))["body"] == "clicked a"
    # The window shows what the host composites: button C (page 10..90, 150..190) over the video.
    await host.request("video-pause")
    await host.settle("o1")
    window = await asyncio.to_thread(grab, environment, tmp_path / "window.png")
    composited = await host.screenshot(tmp_path / "composited.png")
    assert pixel(window, 150, 270) == (255, 255, 255)
    for point in [(150, 270), (600, 400), (20, 500)]:
        assert pixel(window, *point) == pixel(composited, *point), point
