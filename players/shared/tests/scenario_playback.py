"""Play tickets: the player plays the daemon's tickets on its video, finds out
from the platform's stream check that a ticket expired, reports the error at the video's
position and resumes there with the one fresh ticket; the screen states, and Retry. (A scenario of both players: see player_fixtures.py.)"""

from __future__ import annotations

import asyncio
import re

import pytest
from player_support import Unmet, eventually, next_event
from playercore.cli import DEFAULT_VIDEO

pytestmark = pytest.mark.asyncio
WAIT = 20.0
CHECK_INTERVAL = 2.0  # the player's stream check (webplayer/sdk.py)


async def _page(remote):
    return (await remote.state())["playback"]


async def _requests(backend, episode):
    counts = (await asyncio.to_thread(backend.admin_sync, "playback"))["requests"]
    return counts.get(episode, 0)


@pytest.mark.player_args("--play", "f1", "1")
async def test_an_expired_ticket_resumes_at_the_same_position(backend, viewer, player, remote):
    # The episodes play on the clip: without it the video never moves.
    assert DEFAULT_VIDEO.exists(), f"no clip at {DEFAULT_VIDEO}: scripts/setup makes it (players/shared/make-test-clip)"

    async def playing_mid_episode():
        page = await _page(remote)
        return (page["vid"] == "f1-e1" and page["state"] == "playing" and page["time"] >= 3.0
                and page["card"] is None) or Unmet(page)
    await eventually(playing_mid_episode, "episode 1 playing for 3 s", timeout=30)
    assert await _requests(backend, "f1/1") == 1
    stream = viewer.events(types=["playback."])
    await asyncio.wait_for(stream.open(), WAIT)

    before = (await _page(remote))["time"]
    await asyncio.to_thread(backend.admin_sync, "playback", {"expireTickets": True})
    play = await next_event(stream, "playback.play", timeout=WAIT)
    # The player reported the error at its video's position; the fresh ticket starts there.
    assert (play["filmId"], play["episodeNo"], play["vid"]) == ("f1", 1, "f1-e1")
    assert before <= play["startAt"] <= before + CHECK_INTERVAL + 1.5, (before, play["startAt"])
    logged = re.findall(r"refused f1-e1 \(expired\) at ([0-9.]+) s: reporting playback.error", player.log())
    assert len(logged) == 1 and abs(float(logged[0]) - play["startAt"]) <= 0.05, (logged, play["startAt"])

    async def resumed():
        page = await _page(remote)
        return page if page["state"] == "playing" and (page["note"] or "").startswith("Resumed at") \
            and page["playedFrom"] is not None else Unmet(page)
    page = await eventually(resumed, "the video playing again")
    assert abs(page["playedFrom"] - play["startAt"]) <= 1.0, (play["startAt"], page["playedFrom"])
    assert page["time"] >= play["startAt"], (play["startAt"], page["time"])
    status = await viewer.call("daemon.status")
    assert status["playback"]["refreshedAfterError"] is True
    assert await _requests(backend, "f1/1") == 2  # the first play and exactly one refresh

    # The fresh ticket passes the next checks: no second error, no other request.
    await asyncio.sleep(CHECK_INTERVAL + 0.5)
    assert (await _page(remote))["state"] == "playing"
    assert await _requests(backend, "f1/1") == 2
    refused = player.screenshots_of("f1-e1", "playback-refused")
    resumed = player.screenshots_of("f1-e1", "playback-resumed")
    assert len(refused) == 1 and len(resumed) == 1 and refused[0] < resumed[0]

    # The clip's end is the episode's end: the player starts episode 2, whose prefetched ticket
    # plays at once from 0 (the play request is still sent: it records the view).
    following = await next_event(stream, "playback.play", timeout=WAIT)
    assert (following["episodeNo"], following["startAt"]) == (2, 0)
    await eventually(lambda: _count_is(backend, "f1/2", 1), "episode 2's view recorded")
    assert await _requests(backend, "f1/1") == 2


@pytest.mark.player_args("--play", "f-busy", "1")
async def test_retry_on_a_message_sends_a_new_start(backend, viewer, player, remote):
    async def retry_offered():
        page = await _page(remote)
        return page["state"] == "message" and page["retry"] and (await remote.state())["focus"] == "playback-retry"
    await eventually(retry_offered, "the message with a focused Retry", timeout=30)
    assert (await _page(remote))["card"] == "Busy, try again in a moment"
    assert await _requests(backend, "f-busy/1") == 1
    await eventually(lambda: _shot(player, "f-busy-1", "playback-message"), "the message's screenshot")

    await remote.press("Enter")
    await eventually(lambda: _count_is(backend, "f-busy/1", 2), "the second play request")
    records = (await asyncio.to_thread(backend.admin_sync, "play-requests?filmId=f-busy"))["items"]
    assert [(r["episodeNo"], r["unionInfo"]) for r in records] == [(1, "webplayer-union-0001")] * 2

    # A paywall is a card without Retry; the focus leaves the hidden button.
    stream = viewer.events(types=["playback."])
    await asyncio.wait_for(stream.open(), WAIT)
    await viewer.call("playback.start", {"filmId": "f-locked", "episodeNo": 1,
                                         "device": {"unionInfo": "webplayer-union-0001",
                                                    "drmKek": "webplayer-kek-0001"}})

    async def paywall():
        state = await remote.state()
        return state["playback"]["card"] == "Subscribers only" and not state["playback"]["retry"] \
            and state["focus"] != "playback-retry"
    await eventually(paywall, "the paywall card")
    await eventually(lambda: _shot(player, "f-locked-1", "playback-paywall"), "the paywall's screenshot")


async def _shot(player, name, what):
    return player.screenshot(name, what)


async def _count_is(backend, episode, count):
    return await _requests(backend, episode) == count
