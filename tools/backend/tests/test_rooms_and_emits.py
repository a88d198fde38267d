"""join-room / leave-room / ckst / emit-ack / receive-message, and server emits."""

from __future__ import annotations

import time

import pytest
import pytest_asyncio
from support import Admin, BackendProcess, RecordingClient

pytestmark = pytest.mark.asyncio

OVERLAY = {
    "timelineId": "tl1", "typeTimeline": 1, "url": "https://cdn.example/quiz.html?id=tl1",
    "position": {"alignment": 4, "width": 40, "height": 30}, "duration": 30,
    "targets": ["all"], "traceLock": False, "requireVip": False, "requireBet": False,
    "requireFanclub": False, "betAmount": 0,
}


@pytest_asyncio.fixture
async def pair(backend: BackendProcess):
    """Two connected clients: ``a`` logged in as alice, ``b`` anonymous."""
    a, b = RecordingClient(backend.base_url), RecordingClient(backend.base_url)
    await a.connect(token="token-alice")
    await b.connect()
    yield a, b
    await a.close()
    await b.close()


async def test_join_room_acks_and_fills_the_room(pair, admin: Admin) -> None:
    a, b = pair
    assert await a.join("m1", user_id="alice") == {"ok": True}
    assert await b.join("m2") == {"ok": True}
    rooms = (await admin.get("rooms"))["rooms"]
    assert rooms == {"m1": [a.sio.get_sid()], "m2": [b.sio.get_sid()]}
    [event] = await admin.items("room-events", type="join-room", mediaId="m1")
    assert event["sid"] == a.sio.get_sid() and event["acked"] is True
    assert event["payload"]["displayName"] == "An" and event["problems"] == []


async def test_join_room_problems_are_listed(pair, admin: Admin) -> None:
    a, _ = pair
    ack = await a.sio.call("join-room", {"mediaId": "m1", "userId": "bob", "os": "tizen"},
                           timeout=5)
    assert ack == {"ok": True}
    [event] = await admin.items("room-events", type="join-room")
    assert set(event["problems"]) == {
        "missing displayName", "userId differs from the token's user",
        "os differs from the os header",
    }
    assert await a.sio.call("join-room", {"userId": "alice"}, timeout=5) == {
        "ok": False, "error": "mediaId is required"}


async def test_leave_room_and_ckst_are_recorded_in_order(pair, admin: Admin) -> None:
    a, _ = pair
    await a.join("m1")
    await a.sio.emit("ckst", {"mediaId": "m1", "state": "playing", "position": 123.4})
    await a.sio.emit("leave-room", {"mediaId": "m1", "userId": "u1"})
    events = await admin.wait_items("room-events", count=3)
    assert [e["type"] for e in events] == ["join-room", "ckst", "leave-room"]
    assert events[1]["payload"]["position"] == 123.4
    assert (await admin.get("rooms"))["rooms"] == {}


async def test_disconnect_empties_rooms(backend: BackendProcess, admin: Admin) -> None:
    client = RecordingClient(backend.base_url)
    await client.connect()
    await client.join("m1")
    await client.close()
    await admin.poll("rooms", lambda reply: reply["rooms"] == {})


async def test_wrapped_overlay_reaches_only_the_room(pair, admin: Admin) -> None:
    a, b = pair
    await a.join("m1")
    await b.join("m2")
    before = int(time.time() * 1000)
    reply = await admin.post("emit", {"event": "overlay", "room": "m1", "overlay": OVERLAY,
                                      "shape": "wrapped", "trackingId": "t1"})
    assert reply["recipients"] == 1 and reply["sids"] == [a.sio.get_sid()]
    assert reply["trackingId"] == "t1"
    payload = await a.next_event("overlay")
    assert payload == reply["payload"]
    assert payload["data"] == OVERLAY and payload["_trackingId"] == "t1"
    assert before <= payload["_emitTimestamp"] <= int(time.time() * 1000)
    await admin.post("emit", {"event": "overlay", "room": "m2", "payload": {"mark": 1}})
    assert await b.next_event("overlay") == {"mark": 1}
    assert a.events("overlay") == [payload]


async def test_flat_and_untracked_shapes(pair, admin: Admin) -> None:
    a, _ = pair
    await a.join("m1")
    await admin.post("emit", {"event": "ex-overlay", "room": "m1", "overlay": OVERLAY,
                              "shape": "flat", "trackingId": "t2", "emitTimestamp": 1764400000000})
    flat = await a.next_event("ex-overlay")
    assert flat == {**OVERLAY, "_trackingId": "t2", "_emitTimestamp": 1764400000000}
    await admin.post("emit", {"event": "ex-overlay", "room": "m1", "overlay": OVERLAY,
                              "shape": "flat"})
    assert await a.next_event("ex-overlay") == OVERLAY
    await admin.post("emit", {"event": "overlay", "room": "m1", "overlay": OVERLAY})
    assert await a.next_event("overlay") == {"data": OVERLAY}
    reply = await admin.post("emit", {"event": "overlay", "room": "m1", "overlay": OVERLAY,
                                      "trackingId": "auto"})
    auto = await a.next_event("overlay")
    assert auto["_trackingId"] == reply["trackingId"] and auto["_trackingId"].startswith("trk-")


async def test_raw_events_to_everyone_and_to_one_sid(pair, admin: Admin) -> None:
    a, b = pair
    raw = {
        "update-result": {"timelineId": "tl1", "data": {"correct": "B"}},
        "predict-result": {"timelineId": "tl3", "answer1": 12, "answer2": 30},
        "recall-overlay": {"timelineId": "tl1"},
        "action-button-predict": {"timelineId": "tl3", "typeTimeline": 3, "imageIdle": "i",
                                  "imagePower": "p", "visible": True},
    }
    for event, payload in raw.items():
        reply = await admin.post("emit", {"event": event, "room": None, "payload": payload})
        assert reply["recipients"] == 2
        assert await a.next_event(event) == payload
        assert await b.next_event(event) == payload
    reply = await admin.post("emit", {"event": "recall-overlay", "sid": b.sio.get_sid(),
                                      "payload": {"timelineId": "tl9"}})
    assert reply["recipients"] == 1
    assert await b.next_event("recall-overlay") == {"timelineId": "tl9"}
    assert a.events("recall-overlay") == [raw["recall-overlay"]]
    emits = await admin.items("emits", source="admin")
    assert len(emits) == 5


@pytest.mark.parametrize(
    "body",
    [
        {"room": "m1", "overlay": OVERLAY},
        {"event": "overlay", "payload": {}, "overlay": OVERLAY},
        {"event": "overlay", "overlay": OVERLAY, "shape": "nested"},
        {"event": "update-result", "overlay": OVERLAY},
        {"event": "overlay", "payload": {}, "trackingId": "t1"},
        {"event": "overlay", "payload": {}, "room": 5},
        {"event": "overlay", "payload": {}, "bogus": 1},
    ],
)
async def test_bad_emit_bodies_are_400(admin: Admin, body: dict) -> None:
    reply = await admin.post("emit", body, expect=400)
    assert reply["error"]


async def test_emit_ack_is_acked_and_every_one_recorded(pair, admin: Admin) -> None:
    a, _ = pair
    ack = {"trackingId": "t1", "event": "overlay", "stage": "received", "deviceId": "dev1",
           "clientContext": {"platform": "linux"}}
    assert await a.sio.call("emit-ack", ack, timeout=5) == {"ok": True}
    assert await a.sio.call("emit-ack", ack, timeout=5) == {"ok": True}
    rendered = {**ack, "stage": "rendered", "clientContext": {"status": "success"}}
    assert await a.sio.call("emit-ack", rendered, timeout=5) == {"ok": True}
    assert await a.sio.call("emit-ack", {"trackingId": "t2", "stage": "seen"}, timeout=5)
    records = await admin.items("acks", trackingId="t1")
    assert [(r["stage"], r["acked"]) for r in records] == [
        ("received", True), ("received", True), ("rendered", True)]
    assert records[2]["status"] == "success" and records[0]["sid"] == a.sio.get_sid()
    assert records[0]["payload"] == ack and records[0]["problems"] == []
    [odd] = await admin.items("acks", trackingId="t2")
    assert "unknown stage 'seen'" in odd["problems"] and "missing deviceId" in odd["problems"]
    assert len(await admin.items("acks", stage="received")) == 2


async def test_receive_message_and_unknown_events_are_recorded(pair, admin: Admin) -> None:
    a, _ = pair
    sid = a.sio.get_sid()
    message = {"trackingId": "t1", "timelineId": "tl1", "mediaId": "m1", "socketId": sid,
               "receivedAt": 1764400000000}
    await a.sio.emit("receive-message", message)
    await a.sio.emit("receive-message", {**message, "socketId": "someone-else"})
    await a.sio.emit("join_room", {"mediaId": "m1"})
    first, second = await admin.wait_items("receive-messages", count=2)
    assert first["timelineId"] == "tl1" and first["problems"] == [] and first["sid"] == sid
    assert second["problems"] == ["socketId is not the sid of this socket"]
    [unknown] = await admin.wait_items("unknown-events")
    assert unknown["event"] == "join_room" and unknown["args"] == [{"mediaId": "m1"}]
