"""What is the WPE player's own: the pages' IOS bridge is WebKit's (no shim), overlay.post is seen
by the page, the blocked port's silent about:blank is a failure, with $DISPLAY the player is full
screen, and a crash of WebKit's web processes is survived. (Everything else both players do is in the shared scenarios, test_wpe_*.py.)"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from player_support import emit_overlay, eventually, logged, next_event, overlay_spec
from wpehost import HostError, WpeHost, alive, descendants
from wpeplayer_support import PLAYER_DIR, command_name

pytestmark = pytest.mark.asyncio
WAIT = 20.0
BLOCKED_PORT = 6000  # X11's, on WebKit's list of ports it refuses


async def shown_overlay(backend, viewer, spec):
    stream = viewer.events(types=["overlay."])
    await asyncio.wait_for(stream.open(), WAIT)
    await emit_overlay(backend, spec)
    overlay_id = (await next_event(stream, "overlay.show"))["overlayId"]
    return stream, overlay_id


async def test_the_pages_see_webkits_own_ios_handler_and_none_of_the_players_scripts(
        backend, viewer, player, remote, pages):
    stream, overlay_id = await shown_overlay(backend, viewer, overlay_spec("tl-own", f"{pages.base_url}/listener.html"))
    await next_event(stream, "overlay.reveal", overlay_id)  # the page's post reached the daemon
    page = "listener.html"
    source = await remote.in_frame(page, "window.webkit.messageHandlers.IOS.postMessage.toString()")
    assert source.replace(" ", "").replace("\n", "") == "functionpostMessage(){[nativecode]}"
    assert await remote.in_frame(page, "Object.prototype.toString.call(window.webkit.messageHandlers.IOS)") \
        == "[object UserMessageHandler]"
    assert await remote.in_frame(page, "Object.getOwnPropertyNames(window.webkit.messageHandlers.IOS)") == []
    assert await remote.in_frame(page, "Object.keys(window.webkit.messageHandlers)") == []
    # The player's remote runs in the view's isolated world: the page sees none of it.
    for name in ("InteractivedSpatial", "interactivedRemote", "leave", "__interactivedBridge"):
        assert await remote.in_frame(page, f"typeof window.{name}") == "undefined", name
    assert await remote.in_frame(page, "typeof window.interactivedRemote", world="host") == "object"
    assert await remote.in_frame(page, "typeof window.webkit.messageHandlers.host") == "undefined"


async def test_overlay_post_is_seen_by_the_page(backend, viewer, player, remote, pages):
    stream, overlay_id = await shown_overlay(backend, viewer,
                                             overlay_spec("tl-post", f"{pages.base_url}/listener.html"))
    await next_event(stream, "overlay.reveal", overlay_id)
    data = {"correct": "B", "text": 'Blue it was \\ "quoted" ✓'}
    await asyncio.to_thread(backend.admin_sync, "emit", {
        "event": "update-result", "room": "m1", "payload": {"timelineId": "tl-post", "data": data}})
    post = await next_event(stream, "overlay.post", overlay_id)
    received = await eventually(lambda: remote.in_frame("listener.html", "window.received.length ? window.received : null"),
                                "the post in the page")
    assert [json.loads(text) for text in received] == [post["message"]]
    assert post["message"]["key"] == "UPDATE_DATA_INTERACTIVE"


async def test_a_blocked_port_is_reported_failed_not_loaded(backend, viewer, player, remote):
    record = await asyncio.to_thread(backend.admin_sync, "emit", {
        "event": "overlay", "room": "m1", "trackingId": "auto",
        "overlay": overlay_spec("tl-blocked", f"http://127.0.0.1:{BLOCKED_PORT}/quiz.html")})

    async def rendered_ack():
        acks = (await asyncio.to_thread(backend.admin_sync,
                                        f"acks?trackingId={record['trackingId']}&stage=rendered"))["items"]
        return acks[0] if acks else None
    ack = await eventually(rendered_ack, "the rendered ack")
    assert ack["status"] == "failed", ack
    assert "failed: blocked: WebKit loaded about:blank instead" in player.log()
    await eventually(lambda: _no_overlay_views(remote), "the blocked overlay's view destroyed")


async def _no_overlay_views(remote):
    return await remote.overlay_views() == []


async def test_with_a_display_the_player_is_full_screen(daemon, viewer, tmp_path):
    read_end, write_end = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1024x576x24", "-nolisten", "tcp"],
                              pass_fds=(write_end,), stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as announced:
        display = announced.readline().strip()
    folder = Path(tempfile.mkdtemp(prefix="wpe-", dir="/tmp"))
    log = (tmp_path / "player.log").open("wb")
    player = subprocess.Popen([sys.executable, str(PLAYER_DIR / "player"), "--socket", daemon.socket_path,
                               "--host-socket", str(folder / "host.sock")], stdin=subprocess.DEVNULL,
                              stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, DISPLAY=f":{display}"))
    processes: list[int] = []
    try:
        await eventually(lambda: _exists(folder / "host.sock"), "the player up", 60)
        host = await WpeHost.connect(folder / "host.sock")
        try:
            assert (host.ready["headless"], host.ready["width"], host.ready["height"]) == (False, 1024, 576)
            tv = next(view for view in (await host.request("list-views"))["views"] if view["viewId"] == "tv")
            assert (tv["width"], tv["height"]) == (1024, 576)
            assert await host.run_js("tv", "[window.innerWidth, window.innerHeight]") == [1024, 576]
        finally:
            await host.close()
        processes = [player.pid, *descendants(player.pid)]
    finally:
        player.terminate()
        status = player.wait(20)
        log.close()
        server.terminate()
        server.wait(10)
    assert status == 0, (tmp_path / "player.log").read_text()
    assert len(processes) >= 3 and alive(processes) == []


async def _exists(path: Path):
    return path.exists()


async def test_after_webkits_web_processes_crash_the_tv_page_and_its_overlay_come_back(backend, viewer, player, remote):
    stream, overlay_id = await shown_overlay(backend, viewer,
                                             overlay_spec("tl-crash", f"{backend.base_url}/templates/quiz.html?id=tl-crash"))
    await next_event(stream, "overlay.reveal", overlay_id)
    # The page posts its reveal while it loads: the crash must come after the load, or the
    # player rightly reports a failed load, the daemon takes the overlay off and nothing comes back.
    await eventually(lambda: logged(player, f"overlay {overlay_id} loaded"), "the overlay's load reported")
    web = [pid for pid in player.processes() if command_name(pid) == "WPEWebProcess"]
    # The TV page's, the overlay's, and after a load sometimes one WebKit keeps warm for the next.
    assert len(web) >= 2, web
    for pid in web:
        os.kill(pid, signal.SIGKILL)

    async def redrawn():
        try:
            state = await remote.state()
        except HostError:  # no page in the TV view yet
            return None
        return [(o["overlayId"], o["revealed"]) for o in state["overlays"]] == [(overlay_id, True)] \
            and any("id=tl-crash" in url for url in await remote.frame_urls())
    await eventually(redrawn, "the TV page loaded again and the overlay drawn from the daemon's snapshot", 30)
    assert "the TV page is back: redrawing it" in player.log()
    assert await eventually(lambda: remote.focused_in_frame("id=tl-crash"), "the quiz's first choice focused") \
        == "A. Team Red"
