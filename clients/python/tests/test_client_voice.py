"""The voice room's API (voice_join, voice_leave, voice_mute, voice_status and VoiceRoom over the
voice.* events) against a scripted JSON-lines server that speaks docs/ipc.md's voice exchanges
(scripted_voice_daemon.py): the daemon on this branch does not answer voice.* yet."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

import interactived_client
from interactived_client import DaemonError, VoiceParticipant, VoiceRoom
from scripted_voice_daemon import ScriptedVoiceDaemon, daemon_error

WAIT = 10.0
JOINED = {"room": "watch-party", "state": "joined", "selfId": "4711", "muted": False, "error": None,
          "participants": [{"peerId": "4711", "display": "Alice", "muted": False, "talking": False},
                           {"peerId": "88", "display": "Bob", "muted": True, "talking": False}]}


@pytest_asyncio.fixture
async def scripted(tmp_path) -> AsyncIterator[ScriptedVoiceDaemon]:
    server = await ScriptedVoiceDaemon(str(tmp_path / "voice.sock")).start()
    yield server
    await server.stop()


@pytest.mark.asyncio
async def test_voice_join_sends_the_params_and_reads_the_room(scripted):
    scripted.replies["voice.join"] = JOINED
    async with await interactived_client.connect(scripted.path) as client:
        room = await client.voice_join("watch-party", muted=True, pin="1234", timeout_ms=5000, timeout=WAIT)
    assert scripted.requests[-1] == ("voice.join", {"room": "watch-party", "muted": True, "pin": "1234",
                                                    "timeoutMs": 5000})
    assert room.joined and room.self_id == "4711" and room.room == "watch-party"
    assert room.participants == [VoiceParticipant("4711", "Alice", False, False),
                                 VoiceParticipant("88", "Bob", True, False)]


@pytest.mark.asyncio
async def test_voice_join_defaults_send_only_room_and_muted(scripted):
    scripted.replies["voice.join"] = {"room": "r", "state": "connecting", "selfId": None, "muted": False,
                                      "participants": [], "error": None}
    async with await interactived_client.connect(scripted.path) as client:
        room = await client.voice_join("r", timeout=WAIT)
    assert scripted.requests[-1] == ("voice.join", {"room": "r", "muted": False})
    assert room.state == "connecting" and room.active and not room.joined


@pytest.mark.asyncio
async def test_voice_errors_carry_their_names(scripted):
    scripted.replies["voice.join"] = daemon_error("interactive.BackendRefused", "wrong pin")
    scripted.replies["voice.leave"] = daemon_error("interactive.NoRoom", "not in a voice room")
    scripted.replies["voice.mute"] = daemon_error("interactive.VoiceUnavailable", "no microphone",
                                                  reason="autoaudiosrc: no device")
    async with await interactived_client.connect(scripted.path) as client:
        with pytest.raises(DaemonError) as raised:
            await client.voice_join("r", pin="0000", timeout=WAIT)
        assert (raised.value.code, raised.value.name) == (-32000, "interactive.BackendRefused")
        with pytest.raises(DaemonError) as raised:
            await client.voice_leave(timeout=WAIT)
        assert raised.value.name == "interactive.NoRoom"
        with pytest.raises(DaemonError) as raised:
            await client.voice_mute(True, timeout=WAIT)
        assert raised.value.data["reason"] == "autoaudiosrc: no device"


@pytest.mark.asyncio
async def test_leave_mute_and_status(scripted):
    scripted.replies["voice.leave"] = {"room": "watch-party", "state": "left"}
    scripted.replies["voice.mute"] = {"room": "watch-party", "muted": True}
    async with await interactived_client.connect(scripted.path) as client:
        assert await client.voice_status(timeout=WAIT) is None
        scripted.voice = JOINED
        room = await client.voice_status(timeout=WAIT)
        assert room is not None and [p.display for p in room.participants] == ["Alice", "Bob"]
        room.apply_mute(await client.voice_mute(True, timeout=WAIT))
        assert scripted.requests[-1] == ("voice.mute", {"muted": True})
        assert room.muted and room.participant("4711").muted
        assert await client.voice_leave(timeout=WAIT) == {"room": "watch-party", "state": "left"}


@pytest.mark.asyncio
async def test_the_events_keep_a_room_from_the_snapshot_up_to_date(scripted):
    scripted.voice = JOINED
    async with await interactived_client.connect(scripted.path) as client:
        stream = client.events(types=[interactived_client.VOICE_EVENTS])
        room = VoiceRoom.from_status((await stream.open())["voice"])
        assert room is not None
        await scripted.emit("voice.peer", {"room": "watch-party", "peerId": "93", "display": "Carol",
                                           "event": "joined", "muted": False})
        await scripted.emit("voice.talking", {"room": "watch-party", "peerId": "93", "talking": True})
        await scripted.emit("voice.talking", {"room": "watch-party", "peerId": "4711", "talking": True})
        await scripted.emit("voice.peer", {"room": "watch-party", "peerId": "88", "display": "Bob",
                                           "event": "updated", "muted": False})
        await scripted.emit("voice.peer", {"room": "other", "peerId": "5", "display": "Eve",
                                           "event": "joined", "muted": False})
        for _ in range(5):
            event = await asyncio.wait_for(stream.__anext__(), WAIT)
            room.apply(event["type"], event["data"])
        assert [(p.display, p.muted, p.talking) for p in room.participants] == [
            ("Alice", False, True), ("Bob", False, False), ("Carol", False, True)]
        assert [p.display for p in room.others_talking] == ["Carol"]

        await scripted.emit("voice.peer", {"room": "watch-party", "peerId": "93", "display": "Carol",
                                           "event": "left", "muted": False, "reason": "timeout"})
        await scripted.emit("voice.state", {"room": "watch-party", "state": "reconnecting", "selfId": "4711",
                                            "muted": False, "participants": 2, "error": None, "reason": None})
        await scripted.emit("voice.state", {"room": "watch-party", "state": "joined", "selfId": "4711",
                                            "muted": False, "participants": 3, "error": None, "reason": None})
        for _ in range(3):
            event = await asyncio.wait_for(stream.__anext__(), WAIT)
            room.apply(event["type"], event["data"])
        assert [p.display for p in room.participants] == ["Alice", "Bob"] and room.others_talking == []
        assert room.joined and room.needs_status  # three now, two known: read the list again

        await scripted.emit("voice.state", {"room": "watch-party", "state": "left", "selfId": "4711",
                                            "muted": False, "participants": 0, "error": None, "reason": "kicked"})
        event = await asyncio.wait_for(stream.__anext__(), WAIT)
        assert room.apply(event["type"], event["data"])
        assert (room.state, room.reason, room.participants, room.active) == ("left", "kicked", [], False)


def test_a_status_without_a_room_is_none():
    assert VoiceRoom.from_status(None) is None
    assert VoiceRoom.from_status({"state": "joined"}) is None
    room = VoiceRoom.from_status({"room": "r", "state": "error", "participants": [{"display": "no id"}],
                                  "error": {"name": "interactive.BackendUnreachable", "message": "timed out"}})
    assert room is not None and room.participants == [] and room.error["name"] == "interactive.BackendUnreachable"
