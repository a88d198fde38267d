"""The voice room's panel: it lists the participants of a ``voice.state``, follows ``voice.peer``,
marks who talks and lowers the programme's volume while someone else does, and the mute key
sends ``voice.mute``. The daemon's voice events come from ``voice_daemon``, a relay that adds a
scripted voice room to the real daemon (scripted_voice_relay.py). (A scenario of both players:
see player_fixtures.py.)"""

from __future__ import annotations

from typing import Any, Optional

import pytest
from player_support import coloured_box, eventually

from playercore.voice import DUCKED_VOLUME, NORMAL_VOLUME

pytestmark = pytest.mark.asyncio
ROOM = "watch-party"
FRIENDS = [{"peerId": "4711", "display": "Alice", "muted": False},
           {"peerId": "88", "display": "Bob", "muted": True},
           {"peerId": "93", "display": "Carol", "muted": False}]
MUTE_KEY = "ColorF0Red"  # the remote's red key
TALKING_GREEN = (62, 224, 122)  # tv.css: a talking participant's light


async def _voice(remote) -> Optional[dict[str, Any]]:
    return (await remote.state())["voice"]


async def _rows(remote) -> Optional[list[tuple[str, bool, bool, bool]]]:
    voice = await _voice(remote)
    return None if voice is None else [(p["display"], p["muted"], p["talking"], p["self"]) for p in voice["participants"]]


async def _rows_are(remote, expected):
    return await _rows(remote) == expected


async def _volume_is(remote, level):
    return abs((await remote.state())["volume"] - level) < 1e-6


async def test_the_panel_lists_the_room_and_follows_who_joins_and_leaves(voice_daemon, player, remote):
    await voice_daemon.wait_subscribed()
    assert await _voice(remote) is None
    await voice_daemon.join(ROOM, "4711", FRIENDS)
    await eventually(lambda: _rows_are(remote, [("Alice", False, False, True), ("Bob", True, False, False),
                                                ("Carol", False, False, False)]), "the panel lists the room")
    voice = await _voice(remote)
    assert (voice["room"], voice["state"], voice["muted"], voice["hint"]) == (ROOM, "joined", False, "Mute")
    assert await eventually(lambda: _screenshot(player, "voice-joined", ROOM), "the panel's screenshot")

    await voice_daemon.peer("120", "Dave", "joined")
    await eventually(lambda: _rows_are(remote, [("Alice", False, False, True), ("Bob", True, False, False),
                                                ("Carol", False, False, False), ("Dave", False, False, False)]),
                     "Dave joined")
    await voice_daemon.peer("88", "Bob", "left", muted=True, reason="left")
    await voice_daemon.peer("93", "Carol", "updated", muted=True)
    await eventually(lambda: _rows_are(remote, [("Alice", False, False, True), ("Carol", True, False, False),
                                                ("Dave", False, False, False)]), "Bob left, Carol muted")

    await voice_daemon.leave()
    await eventually(lambda: _gone(remote), "the panel gone after voice.state left")


async def test_talking_marks_the_participant_and_ducks_the_programme(voice_daemon, player, remote):
    await voice_daemon.wait_subscribed()
    await voice_daemon.join(ROOM, "4711", FRIENDS)
    await eventually(lambda: _rows(remote), "the panel")
    assert await _volume_is(remote, NORMAL_VOLUME)

    await voice_daemon.talking("4711", True)  # this box talks: marked, and nothing is lowered
    await eventually(lambda: _rows_are(remote, [("Alice", False, True, True), ("Bob", True, False, False),
                                                ("Carol", False, False, False)]), "this box marked talking")
    assert await _volume_is(remote, NORMAL_VOLUME)

    await voice_daemon.talking("93", True)
    await eventually(lambda: _rows_are(remote, [("Alice", False, True, True), ("Bob", True, False, False),
                                                ("Carol", False, True, False)]), "Carol marked talking")
    await eventually(lambda: _volume_is(remote, DUCKED_VOLUME), "the programme lowered while Carol talks", 5)
    shot = await eventually(lambda: _screenshot(player, "voice-talking", "93"), "Carol's screenshot")
    assert coloured_box(shot, TALKING_GREEN, tolerance=12) is not None, "no talking light on the screenshot"

    await voice_daemon.talking("93", False)
    await eventually(lambda: _volume_is(remote, NORMAL_VOLUME), "the programme restored after Carol", 5)
    assert (await _rows(remote))[2] == ("Carol", False, False, False)


async def test_the_mute_key_sends_voice_mute(voice_daemon, player, remote):
    await voice_daemon.wait_subscribed()
    await voice_daemon.join(ROOM, "4711", FRIENDS)
    await eventually(lambda: _rows(remote), "the panel")
    await remote.press(MUTE_KEY)
    await eventually(lambda: _mutes_are(voice_daemon, [{"muted": True}]), "voice.mute muted: true")
    await eventually(lambda: _rows_are(remote, [("Alice", True, False, True), ("Bob", True, False, False),
                                                ("Carol", False, False, False)]), "this box shown muted")
    assert (await _voice(remote))["hint"] == "Unmute"
    await remote.press(MUTE_KEY)
    await eventually(lambda: _mutes_are(voice_daemon, [{"muted": True}, {"muted": False}]), "voice.mute muted: false")
    await eventually(lambda: _rows_are(remote, [("Alice", False, False, True), ("Bob", True, False, False),
                                                ("Carol", False, False, False)]), "this box shown unmuted")


async def _screenshot(player, what, name):
    return player.screenshot(name, what)


async def _gone(remote):
    return await _voice(remote) is None


async def _mutes_are(relay, expected):
    return relay.mutes == expected
