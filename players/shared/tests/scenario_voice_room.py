"""The voice panel against the real voice manager: the daemon (and its media process) joined to a
room on Debian's Janus with one aiortc friend who talks and stops talking, all in the voice lab's
network namespaces (tools/voice). The reference backend and the daemon run in the box's
namespace (the daemon's media process must reach Janus on the veth: Janus gathers no loopback
candidate); the player stays outside and reaches the daemon through its Unix socket.

The panel lists the friend and this box, marks the friend talking, ducks the programme while it
talks and restores it after, and the mute key makes the daemon mute the box (its
``daemon.status`` says so, and the server tells the friend). Root only, with Janus and aiortc
installed (scripts/setup): skipped with the reason otherwise.

A scenario of both players with fixtures of its own: a player's ``test_ENGINE_voice_room.py`` imports
everything from here, so that its ``backend`` and ``daemon`` (in the box's namespace) replace
the shared ones in that module only."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Optional, TypeVar

import pytest
import pytest_asyncio
from player_support import coloured_box, eventually

from playercore.voice import DUCKED_VOLUME, NORMAL_VOLUME
from tools.backend.tests.support import BackendProcess
from tools.testsupport.daemon import DaemonProcess, built_products
from tools.voice.janus import janus_available
from tools.voice.netns import enter_namespace

pytestmark = pytest.mark.asyncio
T = TypeVar("T")
REPO_ROOT = Path(__file__).resolve().parents[3]
ROOM = "2026"
# Ana says 3 s of a tone, then keeps 3 s of silence: Janus' talking, then stopped-talking.
FRIEND = "Ana:500:3/3"
MUTE_KEY = "ColorF0Red"
TALKING_GREEN = (62, 224, 122)  # tv.css: a talking participant's light
LAB_START = 90.0
LAB_STOP = 30.0


def voice_unavailable() -> Optional[str]:
    """Why the voice lab cannot run here, or None."""
    if os.geteuid() != 0:
        return "the voice lab makes network namespaces, which needs root"
    reason = janus_available()
    if reason:
        return reason
    try:
        import aiortc  # noqa: F401
    except ImportError:
        return "aiortc is not installed (scripts/setup)"
    if not (built_products() / "interactived-voice").exists():
        return "interactived-voice is not built (swift build --product interactived-voice)"
    return None


class VoiceLabProcess:
    """``python3 -m tools.voice lab`` with one friend: Janus and the friend in namespaces of
    their own (tools/voice/README.md); its ready line, then every line it prints (the friend's
    room events). Its standard input closing ends it (it removes everything it made)."""

    def __init__(self, log_path: Path) -> None:
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tools.voice", "lab", "--room", ROOM, "--friend", FRIEND],
            cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log)
        self.lines: list[dict[str, Any]] = []
        self.ready = self._read_ready()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read_ready(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], LAB_START)
        line = self.process.stdout.readline() if ready else b""
        try:
            first = json.loads(line)
        except ValueError:
            self.stop()
            raise RuntimeError(f"the voice lab did not start within {LAB_START} s: {line!r}") from None
        return first

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                self.lines.append(json.loads(line))
            except ValueError:
                continue

    @property
    def namespace(self) -> str:
        return self.ready["boxNamespace"]

    @property
    def friend_id(self) -> str:
        return str(self.ready["friends"][0]["id"])

    def friend_saw_muted(self, peer_id: str) -> bool:
        """Whether the friend got a room event saying that ``peer_id`` is muted."""
        for line in list(self.lines):
            for participant in (line.get("event") or {}).get("participants") or []:
                if str(participant.get("id")) == peer_id and participant.get("muted") is True:
                    return True
        return False

    def stop(self) -> Optional[int]:
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(LAB_STOP)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self._log.close()
        return self.process.returncode


def in_namespace(namespace: str, make: Callable[[], T], timeout: float = 60.0) -> T:
    """``make()`` on a thread that entered ``namespace``: the processes it starts run there."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            enter_namespace(namespace)
            outcome["value"] = make()
        except BaseException as error:  # handed to the caller
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError(f"starting a process in {namespace} took more than {timeout} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.fixture
def voice_lab(tmp_path: Path) -> Iterator[VoiceLabProcess]:
    reason = voice_unavailable()
    if reason:
        pytest.skip(reason)
    lab = VoiceLabProcess(tmp_path / "lab.log")
    yield lab
    assert lab.stop() == 0, (tmp_path / "lab.log").read_text(errors="replace")[-3000:]


@pytest.fixture
def backend(voice_lab: VoiceLabProcess, tmp_path: Path) -> Iterator[BackendProcess]:
    """The reference backend in the box's namespace, where the daemon reaches it on 127.0.0.1."""
    process = in_namespace(voice_lab.namespace, lambda: BackendProcess(tmp_path))
    yield process
    assert process.stop() == 0, process.stderr()


@pytest.fixture
def daemon(voice_lab: VoiceLabProcess, backend: BackendProcess, tmp_path: Path) -> Iterator[DaemonProcess]:
    """The daemon in the box's namespace, its voiceUrl the lab's Janus; its microphone is
    silent (this box never talks, so only the friend ducks the programme) and its speaker a
    fakesink (voiceSource and voiceSink are configuration-file keys)."""
    config = tmp_path / "voice.json"
    config.write_text(json.dumps({"voiceUrl": voice_lab.ready["janus"], "voiceEchoCancel": False,
                                  "voiceSource": "audiotestsrc is-live=true wave=silence",
                                  "voiceSink": "fakesink sync=true"}))
    process = in_namespace(voice_lab.namespace, lambda: DaemonProcess([
        "--config", str(config), "--socket-url", backend.base_url, "--api-url", backend.base_url,
        "--tenant", "onlivev2", "--os", "linuxstb"]))
    yield process
    assert process.stop() == 0, process.log()


@pytest_asyncio.fixture
async def joined(daemon: DaemonProcess, viewer, player, remote) -> dict[str, Any]:
    """The box joined to the lab's room once the player is up: ``voice.join``'s result."""
    result = await viewer.call("voice.join", {"room": ROOM, "timeoutMs": 20000}, timeout=30)
    assert result["state"] == "joined", result
    return result


async def _rows(remote) -> Optional[set[tuple[str, bool, bool]]]:
    voice = (await remote.state())["voice"]
    return None if voice is None else {(p["peerId"], p["muted"], p["self"]) for p in voice["participants"]}


async def _talking(remote, peer_id: str) -> Optional[bool]:
    voice = (await remote.state())["voice"]
    rows = [p for p in (voice or {}).get("participants", []) if p["peerId"] == peer_id]
    return rows[0]["talking"] if rows else None


async def _volume_is(remote, level: float) -> bool:
    return abs((await remote.state())["volume"] - level) < 1e-6


async def test_the_panel_follows_the_real_room(voice_lab, viewer, player, remote, joined):
    self_id, friend = joined["selfId"], voice_lab.friend_id
    await eventually(lambda: _rows_are(remote, {(self_id, False, True), (friend, False, False)}),
                     "the panel lists this box and Ana")
    voice = (await remote.state())["voice"]
    assert (voice["room"], voice["state"], voice["hint"]) == (ROOM, "joined", "Mute")
    assert {p["display"] for p in voice["participants"]} == {"Alice", "Ana"}

    # Ana's tone: Janus says she talks, the daemon says voice.talking, the panel lights her up
    # and the programme is lowered; her silence brings it back.
    await eventually(lambda: _talking(remote, friend), "Ana marked talking", 20)
    await eventually(lambda: _volume_is(remote, DUCKED_VOLUME), "the programme lowered while Ana talks", 5)
    assert await _talking(remote, self_id) is False, "this box (a silent source) marked talking"
    shot = await eventually(lambda: _screenshot(player, friend), "the screenshot of Ana talking")
    assert coloured_box(shot, TALKING_GREEN, tolerance=12) is not None, "no talking light on the screenshot"
    await eventually(lambda: _not_talking(remote, friend), "Ana's silence seen", 10)
    await eventually(lambda: _volume_is(remote, NORMAL_VOLUME), "the programme restored after Ana", 5)

    # The mute key: the daemon mutes the box (its status, the server and so the friend see it).
    await remote.press(MUTE_KEY)
    await eventually(lambda: _status_muted(viewer, True), "daemon.status.voice muted after the mute key")
    await eventually(lambda: _rows_are(remote, {(self_id, True, True), (friend, False, False)}), "this box shown muted")
    assert (await remote.state())["voice"]["hint"] == "Unmute"
    await eventually(lambda: _friend_saw_muted(voice_lab, self_id), "Ana told by Janus that the box is muted")
    await remote.press(MUTE_KEY)
    await eventually(lambda: _status_muted(viewer, False), "daemon.status.voice unmuted after the key again")
    await eventually(lambda: _rows_are(remote, {(self_id, False, True), (friend, False, False)}), "this box shown unmuted")

    await viewer.call("voice.leave", {}, timeout=15)
    await eventually(lambda: _gone(remote), "the panel gone after voice.leave")


async def _rows_are(remote, expected: set[tuple[str, bool, bool]]) -> bool:
    return await _rows(remote) == expected


async def _not_talking(remote, peer_id: str) -> bool:
    return await _talking(remote, peer_id) is False


async def _screenshot(player, peer_id: str) -> Optional[Path]:
    return player.screenshot(peer_id, "voice-talking")


async def _status_muted(viewer, muted: bool) -> bool:
    voice = (await viewer.call("daemon.status", {}, timeout=5)).get("voice") or {}
    return voice.get("muted") is muted and voice.get("state") == "joined"


async def _friend_saw_muted(lab: VoiceLabProcess, peer_id: str) -> bool:
    return await asyncio.to_thread(lab.friend_saw_muted, peer_id)


async def _gone(remote) -> bool:
    return (await remote.state())["voice"] is None
