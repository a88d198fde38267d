"""A player's life through the library: join a live room of the reference backend, get an
overlay, report it, answer it; the answer reaches the backend."""

from __future__ import annotations

import asyncio

import pytest

import interactived_client

pytestmark = pytest.mark.asyncio
WAIT = 15.0


async def next_of(stream, kind):
    async def find():
        async for event in stream:
            if event["type"] == kind:
                return event
        raise AssertionError(f"the stream ended before {kind}")
    return await asyncio.wait_for(find(), WAIT)


async def test_quiz_answered_through_the_library(backend, live_daemon):
    async with await interactived_client.connect(live_daemon.socket_path, client="pytest-player") as client:
        stream = client.events(types=["overlay.", "answer.", "player."])
        await asyncio.wait_for(stream.open(), WAIT)
        await client.call("session.login", {"token": "token-alice", "userId": "alice",
                                            "displayName": "Alice"}, timeout=WAIT)
        joined = await client.call("room.join", {"mediaId": "m1", "mode": "live"}, timeout=WAIT)
        assert joined["state"] == "joined"
        overlay = {"timelineId": "tl1", "typeTimeline": 1,
                   "url": f"{backend.base_url}/templates/quiz.html?id=tl1",
                   "position": {"alignment": 4, "width": 40, "height": 30}, "duration": 30,
                   "targets": ["all"], "traceLock": False, "requireVip": False,
                   "requireBet": False, "requireFanclub": False, "betAmount": 0}
        await asyncio.to_thread(backend.admin_sync, "emit", {
            "event": "overlay", "room": "m1", "overlay": overlay, "trackingId": "auto"})

        show = (await next_of(stream, "overlay.show"))["data"]
        assert show["timelineId"] == "tl1"
        assert show["placement"] == {"location": 4, "widthPct": 40, "heightPct": 30}
        overlay_id = show["overlayId"]
        await client.call("overlay.attached", {"overlayId": overlay_id}, timeout=WAIT)
        rendered = await client.call("overlay.rendered", {"overlayId": overlay_id, "status": "loaded"},
                                     timeout=WAIT)
        assert rendered == {"recorded": True}
        await client.call("overlay.bridge", {"overlayId": overlay_id,
                                             "message": '{"type":"INTERACTIVE_SHOW_ANALYTICS","data":{}}'},
                          timeout=WAIT)
        assert (await next_of(stream, "overlay.reveal"))["data"]["overlayId"] == overlay_id
        assert (await next_of(stream, "player.controls"))["data"] == {"visible": False}
        reply = await client.call("overlay.bridge", {"overlayId": overlay_id, "message": {
            "type": "INTERACTIVE_ACTION_REPORT", "data": {"answer": {"choice": "B"}}}}, timeout=WAIT)
        assert reply == {"handled": True, "action": "answer"}
        result = (await next_of(stream, "answer.result"))["data"]
        assert result["status"] == "success", result

    actions = await asyncio.to_thread(backend.admin_sync, "actions")
    assert [item["body"]["answer"] for item in actions["items"]] == [{"answer": {"choice": "B"}}]
    assert actions["items"][0]["userId"] == "alice"
