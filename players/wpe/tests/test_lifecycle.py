"""Views and the host's own life: a destroyed view is gone (from the screen, and its page with
its connections), the host exits 0 on SIGTERM, at the end of its input or on quit with every
process it started gone, and bad commands get an error, never a crash."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from host_support import eventually, pixel
from wpehost import HostError, WpeHost, alive

pytestmark = pytest.mark.asyncio


async def test_a_destroyed_view_leaves_the_screen_and_its_page_is_gone(host, pages, tmp_path):
    await host.wait_event("video-playing")
    await host.request("video-pause")
    mark = host.mark()
    await host.create_view("o1", url=pages.url("stream.html"), x=100, y=100, width=200, height=200, visible=True)
    assert (await host.wait_event("ios-message", since=mark, viewId="o1"))["body"] == "stream open"
    await host.settle("o1")
    assert pixel(await host.screenshot(tmp_path / "before.png"), 200, 200) == (255, 0, 255)
    reply = await host.request("destroy-view", viewId="o1")
    assert reply["event"] == "view-destroyed" and reply["viewId"] == "o1"
    assert pixel(await host.screenshot(tmp_path / "after.png"), 200, 200) != (255, 0, 255)
    # The page's EventSource connection closed: its document is gone, not just hidden.
    assert await asyncio.to_thread(pages.wait_streams_closed, 1, 10.0)
    assert (await host.request("list-views"))["views"] == []
    with pytest.raises(HostError, match='no view "o1"'):
        await host.run_js("o1", "1")


async def test_sigterm_ends_the_host_and_every_webkit_process(clip, pages):
    host = await WpeHost.start(video=clip)
    for n in range(3):
        await host.create_view(f"o{n}", url=pages.url("bridge.html"))
    for n in range(3):
        await host.wait_event("load-finished", viewId=f"o{n}")
    processes = host.processes()
    names = {open(f"/proc/{pid}/comm").read().strip() for pid in processes}
    assert {"WPEWebProcess", "WPENetworkProce"} <= names, names
    assert await host.stop() == 0
    assert alive(processes) == []


@pytest.mark.parametrize("ending", ["end of input", "quit"])
async def test_the_end_of_input_and_quit_end_the_host_too(clip, pages, ending):
    host = await WpeHost.start(video=clip)
    await host.create_view("o1", url=pages.url("bridge.html"))
    await host.wait_event("load-finished", viewId="o1")
    processes = host.processes()
    assert host.process is not None
    if ending == "quit":
        await host.request("quit")
    else:
        host.process.stdin.close()
    assert await asyncio.wait_for(host.process.wait(), 20) == 0
    await host.close()
    assert alive(processes) == []


async def test_bad_commands_get_an_error_and_the_host_carries_on(host):
    bad = [
        ("create-view", {}, 'missing "viewId"'),
        ("create-view", {"viewId": "o1", "width": 0}, '"width" must be between'),
        ("create-view", {"viewId": "o1", "x": "left"}, '"x" must be an integer'),
        ("create-view", {"viewId": "o1", "kind": "popup"}, '"kind"'),
        ("create-view", {"viewId": "o1", "handlers": ["host"]}, "handler names"),
        ("create-view", {"viewId": "o1", "scripts": [{"file": "/nonexistent.js"}]}, "scripts[0]"),
        ("create-view", {"viewId": "o1", "background": "not a colour"}, '"background"'),
        ("navigate", {"viewId": "nobody", "url": "http://127.0.0.1/"}, 'no view "nobody"'),
        ("run-js", {"viewId": "nobody"}, 'no view "nobody"'),
        ("key", {"key": "NoSuchKey"}, 'unknown key "NoSuchKey"'),
        ("click", {"x": 99999, "y": 0}, '"x" must be between'),
        ("screenshot", {"path": "/nonexistent-folder/x.png"}, "cannot write"),
        ("video-play", {"file": "/nonexistent.webm"}, "no such video file"),
        ("fly", {}, 'unknown command "fly"'),
    ]
    for command, fields, message in bad:
        with pytest.raises(HostError) as error:
            await host.request(command, **fields)
        assert message in str(error.value), (command, fields, str(error.value))
    await host.create_view("o1")
    with pytest.raises(HostError, match="exists already"):
        await host.create_view("o1")
    # Lines that are no command at all get an error without an id.
    mark = host.mark()
    await host.send_line(b'not json\n[1, 2]\n{"id": 5}\n')
    await host.wait_event("error", since=mark, id=5)
    errors = [e for e in host.events(mark) if e["event"] == "error"]
    assert [e.get("id") for e in errors] == [None, None, 5]
    assert errors[2]["message"] == 'missing "cmd"'
    assert [v["viewId"] for v in (await host.request("list-views"))["views"]] == ["o1"]


async def test_the_video_plays_once_or_in_a_loop_from_a_position(host, clip):
    mark = host.mark()
    status = await host.request("video-play", file=str(clip), loop=False, start=11.0)
    assert status["loop"] is False
    playing = await host.wait_event("video-playing", since=mark)
    assert playing["position"] >= 10.9
    ended = await host.wait_event("video-ended", since=mark)
    assert ended["looped"] is False
    assert (await host.request("video-status"))["state"] == "ended"
    mark = host.mark()
    await host.request("video-play", file=str(clip), loop=True, start=11.0)
    assert (await host.wait_event("video-ended", since=mark))["looped"] is True

    async def restarted():
        status = await host.request("video-status")
        return status if status["state"] == "playing" and status["position"] < 5.0 else None
    status = await eventually(restarted, "the loop started again from the beginning")
    assert status["duration"] > 11.5


async def test_a_seek_holds_the_frame_or_plays_on_and_is_reported_when_there(host, clip, tmp_path):
    mark = host.mark()
    await host.request("video-play", file=str(clip), loop=False, start=3.0, paused=True)
    held = await host.wait_event("video-seeked", since=mark)
    assert abs(held["position"] - 3.0) < 0.1 and held["duration"] > 11.5
    assert (await host.request("video-status"))["state"] == "paused"
    first = await host.screenshot(tmp_path / "held.png")
    # Paused, a seek shows the frame there and stays paused.
    mark = host.mark()
    await host.request("video-seek", position=8.0)
    assert abs((await host.wait_event("video-seeked", since=mark))["position"] - 8.0) < 0.1
    status = await host.request("video-status")
    assert status["state"] == "paused" and abs(status["position"] - 8.0) < 0.1
    assert pixel(await host.screenshot(tmp_path / "moved.png"), 100, 50) != pixel(first, 100, 50)  # the clock moved
    # Playing, it plays on from there; after the end, a seek leaves it paused there.
    await host.request("video-resume")
    mark = host.mark()
    await host.request("video-seek", position=11.0, loop=False)
    await host.wait_event("video-seeked", since=mark)
    assert (await host.wait_event("video-ended", since=mark))["looped"] is False
    mark = host.mark()
    await host.request("video-seek", position=2.0)
    await host.wait_event("video-seeked", since=mark)
    status = await host.request("video-status")
    assert status["state"] == "paused" and abs(status["position"] - 2.0) < 0.1 and status["loop"] is False
    await host.request("video-stop")
    with pytest.raises(HostError, match="no video is loaded"):
        await host.request("video-seek", position=1.0)


async def test_a_crashed_web_process_is_reported_per_view_and_a_new_load_brings_the_view_back(host, pages):
    mark = host.mark()
    for view in ("o1", "o2"):
        await host.create_view(view, url=pages.url("bridge.html"))
    for view in ("o1", "o2"):
        await host.wait_event("load-finished", since=mark, viewId=view)
    web_processes = [pid for pid in host.processes() if open(f"/proc/{pid}/comm").read().strip() == "WPEWebProcess"]
    # The views of one site share one web process (each view is related to the first of its kind).
    assert len(web_processes) == 1
    crashed = host.mark()
    os.kill(web_processes[0], signal.SIGKILL)
    for view in ("o1", "o2"):
        event = await host.wait_event("web-process-terminated", since=crashed, viewId=view)
        assert event["reason"] == "crashed"
    mark = host.mark()
    await host.navigate("o1", pages.url("bridge.html"))
    assert (await host.wait_event("load-finished", since=mark, viewId="o1"))["status"] == 200
    assert await host.run_js("o1", "1 + 1") == 2
