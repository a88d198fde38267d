"""Hostile overlay pages and other local users against the reference player (issue 20, item 7):
an overlay can neither navigate the TV page nor open a popup, a page in the TV page's place cannot
speak for it, a flood of bridge posts does not hold the next overlay back, and no other local user
can reach the browser."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from webplayer.cdp import CDPError
from player_support import emit_overlay, eventually, logged, next_event, overlay_spec
from webplayer_support import Remote

pytestmark = pytest.mark.asyncio
WAIT = 20.0
PROBE = Path(__file__).with_name("other_user_probe.py")
NOBODY = 65534


async def test_an_overlay_can_neither_navigate_the_tv_page_nor_open_a_popup(backend, viewer, player, remote,
                                                                            pages):
    stream = viewer.events(types=["overlay.", "answer."])
    await asyncio.wait_for(stream.open(), WAIT)
    url = f"{pages.base_url}/hostile.html?evil={quote(pages.base_url + '/evil.html', safe='')}"
    await emit_overlay(backend, overlay_spec("tl-hostile", url, requireBet=True, betAmount=50))
    overlay_id = (await next_event(stream, "overlay.show"))["overlayId"]
    await next_event(stream, "overlay.reveal", overlay_id)
    # The player's binding is not in the frame, and the TV page's window is another origin's.
    assert await eventually(lambda: pages.report("tvReport-in-frame"), "the frame's look") == "undefined"
    assert await eventually(lambda: pages.report("tvReport-in-parent"), "the parent's look") == "SecurityError"

    await eventually(lambda: remote.focused_in_frame("hostile.html"), "the OK button focused")
    await remote.press("Enter")  # a user activation: what a frame needs to navigate the top
    assert (await next_event(stream, "answer.confirm", overlay_id))["amount"] == 50
    assert await eventually(lambda: pages.report("popup"), "the popup tried") == "blocked"
    assert await eventually(lambda: pages.report("top"), "the TV page's navigation tried") == "SecurityError"

    await eventually(lambda: _dialog_is(remote, "Confirm your answer"), "the bet's dialog on the TV page")
    targets = (await remote.cdp.send("Target.getTargets"))["targetInfos"]
    assert [t["url"].split("?")[0].rsplit("/", 1)[-1] for t in targets if t["type"] == "page"] == ["tv.html"]
    assert (await remote.state())["focus"] == "No"
    await remote.press("Enter")
    result = await next_event(stream, "answer.result", overlay_id)
    assert (result["status"], result["reason"]) == ("failure", "bet_declined")
    assert (await asyncio.to_thread(backend.admin_sync, "actions"))["items"] == []
    assert await pages.report("evil-top") is None and await pages.report("evil-popup") is None


async def test_a_page_in_the_tv_pages_place_is_not_heard_and_the_tv_page_comes_back(backend, viewer, player,
                                                                                   remote, pages):
    stream, overlay_id = await _bet_waiting_for_its_confirmation(backend, viewer, remote)

    # However a page got there, a page in the TV page's place calls the player's binding.
    evil = f"{pages.base_url}/evil.html?overlay={quote(overlay_id)}&via=test"
    await remote.cdp.send("Page.navigate", {"url": evil}, remote.session)
    assert await eventually(lambda: pages.report("evil-test"), "the evil page's call") == "function"
    await eventually(lambda: _revealed(remote, overlay_id), "the TV page back, the overlay redrawn from the snapshot")
    assert "the TV page left for http://127.0.0.1:" in player.log()

    await asyncio.wait_for(viewer.call("answer.confirm", {"overlayId": overlay_id, "accept": False}), WAIT)
    result = await next_event(stream, "answer.result", overlay_id)
    assert (result["status"], result["reason"]) == ("failure", "bet_declined")
    assert (await asyncio.to_thread(backend.admin_sync, "actions"))["items"] == []

    # Later overlays draw as before.
    await emit_overlay(backend, overlay_spec("tl-next", f"{pages.base_url}/solid.html?color=0,255,0"))
    following = (await next_event(stream, "overlay.show"))["overlayId"]
    await next_event(stream, "overlay.reveal", following)
    await eventually(lambda: _revealed(remote, following), "the next overlay revealed")


async def test_only_the_tv_pages_own_context_is_heard(backend, viewer, player, remote):
    stream, overlay_id = await _bet_waiting_for_its_confirmation(backend, viewer, remote)

    # The binding is in every context of the TV page's target: a frame inside the TV page and
    # another world of its main frame call it, five times each.
    accept = json.dumps(json.dumps({"event": "action", "name": "answer.confirm",
                                    "data": {"overlayId": overlay_id, "accept": True}}))
    calls = f"for (var i = 0; i < 5; i++) {{ window.__tvReport({accept}); }}"
    frame = json.dumps(f"<script>{calls}</script>")
    await remote.cdp.send("Runtime.evaluate", {"expression": "var f = document.createElement('iframe');"
                                               f" f.srcdoc = {frame}; document.body.appendChild(f); true"},
                          remote.session)
    tree = await remote.cdp.send("Page.getFrameTree", {}, remote.session)
    world = await remote.cdp.send("Page.createIsolatedWorld", {"frameId": tree["frameTree"]["frame"]["id"],
                                                               "worldName": "not-the-tv-page"}, remote.session)
    await remote.cdp.send("Runtime.evaluate", {"expression": calls, "contextId": world["executionContextId"]},
                          remote.session)
    await eventually(lambda: logged(player, "ignored __tvReport calls from a page that is not the TV page "
                                             "(10 so far)"), "the ten calls ignored")

    assert (await remote.state())["focus"] == "No"
    await remote.press("Enter")
    result = await next_event(stream, "answer.result", overlay_id)
    assert (result["status"], result["reason"]) == ("failure", "bet_declined")
    assert (await asyncio.to_thread(backend.admin_sync, "actions"))["items"] == []


async def test_clients_of_the_devtools_socket_have_sessions_of_their_own(player, remote):
    other = await Remote.attach(player.devtools_socket)
    seen: dict[str, list] = {"remote": [], "other": []}
    remote.cdp.on_event(lambda method, params, session: seen["remote"].append((method, session)))
    other.cdp.on_event(lambda method, params, session: seen["other"].append((method, session)))
    try:
        await other.cdp.send("Runtime.enable", {}, other.session)
        reply = await other.cdp.send("Runtime.evaluate", {"expression": "console.log('to the other'), 6 * 7",
                                                          "returnByValue": True}, other.session)
        assert reply["result"]["value"] == 42
        await eventually(lambda: _saw(seen["other"], "Runtime.consoleAPICalled", other.session),
                         "the other client's console event")
        assert (await remote.state())["controls"] is True
        assert not [event for event in seen["remote"] if event[1] == other.session]
    finally:
        await other.close()
    # The remote (and the player) go on without it.
    assert (await remote.state())["controls"] is True
    assert "DevTools client #" in player.log() and " left" in player.log()


@pytest.mark.skipif(os.geteuid() != 0, reason="the player starts the browser as another user only as root")
async def test_the_browser_runs_as_its_own_user_with_its_sandbox(player):
    processes = await player.browser_processes()
    browser = next(pid for kind, pid in processes if kind == "browser")
    renderers = [pid for kind, pid in processes if kind == "renderer"]
    assert renderers, processes
    for _, pid in processes:
        assert _uids(pid) != {0}, f"browser process {pid} runs as root"
        assert "--no-sandbox" not in _cmdline(pid), f"browser process {pid} runs without its sandbox"
    for pid in renderers:  # the namespace sandbox: their own user namespace, a seccomp filter
        assert os.readlink(f"/proc/{pid}/ns/user") != os.readlink(f"/proc/{browser}/ns/user")
        assert "Seccomp:\t2" in Path(f"/proc/{pid}/status").read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a probe as another user")
async def test_no_other_local_user_can_reach_the_browser(player):
    pids = [pid for _, pid in await player.browser_processes()]
    listening = _listening_inodes(pids)
    found = _probe_as_nobody(listening, pids, player.devtools_socket)
    assert found["devtools"] == [], f"another user spoke DevTools to the browser: {found}"
    assert found["ports"] == [], f"the browser listens on TCP ports: {found}"
    assert found["socket"] == "PermissionError", found
    assert set(found["descriptors"].values()) == {"PermissionError"}, found
    assert listening == set(), f"the browser's processes listen on TCP sockets {listening}"

    # Were the socket's mode (or its folder's) ever wrong, the player still checks who connects.
    os.chmod(player.devtools_socket.parent, 0o711)
    os.chmod(player.devtools_socket, 0o666)
    assert _probe_as_nobody(set(), [], player.devtools_socket)["socket"] == "closed"
    assert f"refused a DevTools client of uid {NOBODY}" in player.log()


def _probe_as_nobody(inodes: set[str], pids: list[int], devtools_socket) -> dict:
    """What other_user_probe.py finds, run as ``nobody``."""
    probe = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--",
         sys.executable, "-I", "-c", PROBE.read_text(),
         json.dumps({"inodes": sorted(inodes), "pids": pids, "socket": str(devtools_socket)})],
        capture_output=True, text=True, timeout=60, cwd="/")
    assert probe.returncode == 0, probe.stderr
    return json.loads(probe.stdout)


async def _bet_waiting_for_its_confirmation(backend, viewer, remote):
    """A quiz with a bet of 50 points answered with the remote: the daemon waits for the viewer's
    confirmation and the TV page shows its dialog. The viewer's event stream and the overlay."""
    stream = viewer.events(types=["overlay.", "answer."])
    await asyncio.wait_for(stream.open(), WAIT)
    await emit_overlay(backend, overlay_spec("tl-bet", f"{backend.base_url}/templates/quiz.html?id=tl-bet",
                                             requireBet=True, betAmount=50))
    overlay_id = (await next_event(stream, "overlay.show"))["overlayId"]
    await next_event(stream, "overlay.reveal", overlay_id)
    await eventually(lambda: remote.focused_in_frame("id=tl-bet"), "a focused choice")
    await remote.press("Enter")
    await next_event(stream, "answer.confirm", overlay_id)
    await eventually(lambda: _dialog_is(remote, "Confirm your answer"), "the bet's dialog")
    return stream, overlay_id


def _uids(pid: int) -> set[int]:
    line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("Uid:"))
    return {int(value) for value in line.split()[1:]}


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")


def _listening_inodes(pids: list[int]) -> set[str]:
    """The inodes of the TCP sockets in LISTEN state that these processes hold."""
    held = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    held.add(target[8:-1])
        except OSError:
            continue
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in held:
                listening.add(fields[9])
    return listening


async def _dialog_is(remote, title):
    return (await remote.state())["dialog"] == title


async def _saw(events, method, session):
    return (method, session) in events



async def _revealed(remote, overlay_id):
    try:
        state = await remote.state()
    except (RuntimeError, CDPError):  # not the TV page (yet)
        return False
    return [o["overlayId"] for o in state["overlays"] if o["revealed"]] == [overlay_id]
