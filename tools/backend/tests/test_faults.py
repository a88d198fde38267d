"""Fault knobs of POST /_admin/fault on the Socket.IO side."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import aiohttp
import pytest
import pytest_asyncio
import socketio
from support import Admin, BackendProcess, RecordingClient

pytestmark = pytest.mark.asyncio

PING_INTERVAL, PING_TIMEOUT = 1, 1.0
ACK = {"trackingId": "t1", "event": "overlay", "stage": "received", "deviceId": "d",
       "clientContext": {}}


def reconnecting_client(base_url: str) -> RecordingClient:
    return RecordingClient(base_url, reconnection=True, reconnection_delay=0.1,
                           reconnection_delay_max=0.2, randomization_factor=0)


@pytest.fixture(scope="module")
def fast_ping_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackendProcess]:
    """A server with pingInterval 1 s and pingTimeout 1 s."""
    process = BackendProcess(
        tmp_path_factory.mktemp("fast"),
        ["--ping-interval", str(PING_INTERVAL), "--ping-timeout", str(PING_TIMEOUT)],
    )
    yield process
    assert process.stop() == 0, process.stderr()


@pytest_asyncio.fixture
async def fast_admin(fast_ping_backend: BackendProcess) -> AsyncIterator[Admin]:
    async with aiohttp.ClientSession() as session:
        admin = Admin(fast_ping_backend.base_url, session)
        await admin.post("reset")
        yield admin


async def test_refuse_with_connect_error_then_clear(backend: BackendProcess, admin: Admin) -> None:
    reply = await admin.post("fault", {"refuseConnections": "connect_error"})
    assert reply["faults"]["refuseConnections"] == "connect_error"
    client = RecordingClient(backend.base_url)
    try:
        with pytest.raises(socketio.exceptions.ConnectionError):
            await client.connect()
        assert client.connect_errors == [{"message": "server refusing connections"}]
        await admin.post("fault", {"refuseConnections": False})
        await client.connect()
        assert client.connects == 1
    finally:
        await client.close()


async def test_refuse_at_transport_level_then_clear(backend: BackendProcess, admin: Admin) -> None:
    await admin.post("fault", {"refuseConnections": "transport"})
    client = RecordingClient(backend.base_url)
    try:
        with pytest.raises(socketio.exceptions.ConnectionError):
            await client.connect()
        # python-socketio reports a transport failure as the string "Connection error", a
        # CONNECT_ERROR packet as its {"message"} object.
        assert client.connect_errors == ["Connection error"]
        [record] = await admin.items("handshakes")
        assert record["refusal"] == "transport: HTTP 503" and record["tenant"] == "vtvlive"
        async with aiohttp.ClientSession() as session:
            url = f"{backend.base_url}/socket.io/?EIO=4&transport=polling"
            async with session.get(url) as reply:
                assert reply.status == 503
        await admin.post("fault", {"refuseConnections": None})
        await client.connect()
        assert client.connects == 1
    finally:
        await client.close()


@pytest.mark.parametrize("mode", [True, "rst"])
async def test_drop_sockets_is_a_transport_loss_and_the_client_reconnects(
    backend: BackendProcess, admin: Admin, mode: object
) -> None:
    client = reconnecting_client(backend.base_url)
    try:
        await client.connect(token="token-bob")
        await client.join("m1")
        old_sid = client.sio.get_sid()
        reply = await admin.post("fault", {"dropSockets": mode})
        assert [hit["sid"] for hit in reply["dropped"]] == [old_sid]
        await client.wait_until(lambda: client.connects == 2, timeout=10)
        assert client.disconnect_reasons == ["transport error"]
        assert client.sio.get_sid() != old_sid
        handshakes = await admin.items("handshakes", accepted="true")
        assert len(handshakes) == 2 and handshakes[1]["userId"] == "bob"
        assert handshakes[0]["disconnectReason"] == "transport close"
        assert (await admin.get("rooms"))["rooms"] == {}
    finally:
        await client.close()


async def test_disconnect_sockets_is_a_clean_socketio_disconnect(
    backend: BackendProcess, admin: Admin
) -> None:
    client = reconnecting_client(backend.base_url)
    try:
        await client.connect()
        sid = client.sio.get_sid()
        reply = await admin.post("fault", {"disconnectSockets": True})
        assert reply["disconnected"] == [sid]
        await client.wait_until(lambda: client.disconnect_reasons != [], timeout=5)
        assert client.disconnect_reasons == ["server disconnect"]
        [record] = await admin.items("handshakes", sid=sid)
        assert record["disconnectReason"] == "server disconnect"
        await asyncio.sleep(0.5)  # a client kicked out by the server does not come back
        assert client.connects == 1
    finally:
        await client.close()


async def test_ack_emit_ack_off_leaves_emit_ack_unacked(
    backend: BackendProcess, admin: Admin
) -> None:
    client = RecordingClient(backend.base_url)
    try:
        await client.connect()
        await admin.post("fault", {"ackEmitAck": False})
        with pytest.raises(socketio.exceptions.TimeoutError):
            await client.sio.call("emit-ack", ACK, timeout=1)
        await admin.post("fault", {"ackEmitAck": None})
        assert await client.sio.call("emit-ack", ACK, timeout=5) == {"ok": True}
        records = await admin.items("acks", trackingId="t1")
        assert [r["acked"] for r in records] == [False, True]
    finally:
        await client.close()


async def test_ack_join_room_off_still_joins(backend: BackendProcess, admin: Admin) -> None:
    client = RecordingClient(backend.base_url)
    try:
        await client.connect()
        await admin.post("fault", {"ackJoinRoom": False})
        with pytest.raises(socketio.exceptions.TimeoutError):
            await client.sio.call("join-room", {"mediaId": "m1"}, timeout=1)
        assert (await admin.get("rooms"))["rooms"] == {"m1": [client.sio.get_sid()]}
        [event] = await admin.items("room-events", type="join-room")
        assert event["acked"] is False
    finally:
        await client.close()


@pytest.mark.parametrize(
    "body",
    [
        {"nope": 1},
        {"refuseConnections": "maybe"},
        {"restDelayMs": -1},
        {"restFail": 200},
        {"actionsReply": ""},
        {"ackEmitAck": "no"},
        {"dropSockets": "fin"},
        {"stopPings": "yes"},
        {"restFraming": "loud"},
        {"restPadBytes": -1},
        {"refusalStatus": 100},
        {"vipReply": ""},
        {"playNextCount": 300_000},
        {"playReply": "cursed"},
        [],
    ],
)
async def test_bad_knobs_are_400(admin: Admin, body: object) -> None:
    assert (await admin.post("fault", body, expect=400))["error"]


async def test_reset_clears_faults(admin: Admin) -> None:
    await admin.post("fault", {"restFail": 503, "ackEmitAck": False, "luckyNumber": 3})
    state = await admin.post("reset")
    assert state["faults"] == {
        "refuseConnections": False, "restDelayMs": 0, "restFail": False,
        "actionsReply": "success", "ackEmitAck": True, "ackJoinRoom": True, "joinAckDelayMs": 0, "statusDelayMs": 0, "luckyNumber": 7,
        "playDelayMs": 0, "playReply": False, "playNextCount": None, "closeWithoutReply": False,
        "restFraming": False, "restPadBytes": 0, "refusalStatus": 200, "vipReply": False,
    }
    assert all(count == 0 for count in state["records"].values())


async def test_fast_pings_keep_a_healthy_connection(
    fast_ping_backend: BackendProcess, fast_admin: Admin
) -> None:
    client = RecordingClient(fast_ping_backend.base_url)
    try:
        await client.connect()
        await asyncio.sleep(3 * (PING_INTERVAL + PING_TIMEOUT))  # several ping cycles
        assert client.disconnect_reasons == [] and client.sio.connected
        assert await client.join("m1") == {"ok": True}
    finally:
        await client.close()


async def test_stop_pings_makes_the_client_detect_a_dead_connection(
    fast_ping_backend: BackendProcess, fast_admin: Admin
) -> None:
    client = reconnecting_client(fast_ping_backend.base_url)
    try:
        await client.connect(token="token-alice")
        await client.join("m1")
        old_sid = client.sio.get_sid()
        started = time.monotonic()
        reply = await fast_admin.post("fault", {"stopPings": True})
        assert [hit["sid"] for hit in reply["newlySilenced"]] == [old_sid]
        assert reply["silenced"] == reply["newlySilenced"]
        sockets = (await fast_admin.get("sockets"))["items"]
        assert [s["silenced"] for s in sockets] == [True]
        emitted = await fast_admin.post("emit", {"event": "overlay", "room": "m1",
                                                 "payload": {"lost": True}})
        assert emitted["recipients"] == 1
        limit = 2 * (PING_INTERVAL + PING_TIMEOUT) + 3
        await client.wait_until(lambda: client.disconnect_reasons != [], timeout=limit)
        elapsed = time.monotonic() - started
        # No close frame, no DISCONNECT: only the missing pings end it, after at least most
        # of a ping interval (the last PING came at most one interval before the fault).
        assert client.disconnect_reasons == ["transport error"]
        assert elapsed >= 0.9 * PING_INTERVAL, elapsed
        assert client.events("overlay") == []
        await client.wait_until(lambda: client.connects == 2, timeout=10)
        assert client.sio.get_sid() != old_sid
        # The client closed the silent connection, so nothing is silenced any more.
        await fast_admin.poll("fault", lambda r: r["silenced"] == [])
        await client.join("m1")
        await fast_admin.post("emit", {"event": "overlay", "room": "m1", "payload": {"n": 2}})
        assert await client.next_event("overlay") == {"n": 2}
        [old] = await fast_admin.items("handshakes", sid=old_sid)
        # The server's ping timeout, unless the client hung up first.
        assert old["disconnectReason"] in ("ping timeout", "transport close")
    finally:
        await client.close()


async def test_stop_pings_false_releases_a_silenced_socket(
    fast_ping_backend: BackendProcess, fast_admin: Admin
) -> None:
    client = RecordingClient(fast_ping_backend.base_url)
    try:
        await client.connect()
        await client.join("m1")
        await fast_admin.post("fault", {"stopPings": True})
        reply = await fast_admin.post("fault", {"stopPings": False})
        assert len(reply["released"]) == 1 and reply["silenced"] == []
        await fast_admin.post("emit", {"event": "overlay", "room": "m1", "payload": {"n": 1}})
        assert await client.next_event("overlay") == {"n": 1}
    finally:
        await client.close()


async def test_a_silenced_connection_stays_open_and_says_nothing(
    fast_ping_backend: BackendProcess, fast_admin: Admin
) -> None:
    """Raw Engine.IO over WebSocket: after stopPings no frame at all arrives, not even a close,
    for longer than the server's own ping timeout, until the client hangs up."""
    url = fast_ping_backend.base_url.replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket"
    headers = {"x-tenant-id": "vtvlive", "os": "linuxstb"}
    async with aiohttp.ClientSession() as session, session.ws_connect(
        url, headers=headers, autoping=False
    ) as ws:
        opened = await ws.receive_str(timeout=5)
        assert opened.startswith("0{")
        await ws.send_str("40")
        assert (await ws.receive_str(timeout=5)).startswith("40{")
        assert await ws.receive_str(timeout=5) == "2"  # a PING
        await ws.send_str("3")  # its PONG
        await fast_admin.post("fault", {"stopPings": True})
        silence = 2 * (PING_INTERVAL + PING_TIMEOUT) + 1
        with pytest.raises(asyncio.TimeoutError):
            message = await ws.receive(timeout=silence)
            pytest.fail(f"the silenced server sent {message}")
        assert not ws.closed
        # The server's own ping timeout has ended the session meanwhile.
        await fast_admin.poll("sockets", lambda r: r["items"] == [])
        assert len((await fast_admin.get("fault"))["silenced"]) == 1
    await fast_admin.poll("fault", lambda r: r["silenced"] == [])
