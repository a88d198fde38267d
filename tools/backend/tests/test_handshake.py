"""Socket.IO handshake: tenant and os headers, tokens, anonymous viewers, records."""

from __future__ import annotations

import pytest
import socketio
from support import Admin, BackendProcess, RecordingClient

pytestmark = pytest.mark.asyncio


async def refused(backend: BackendProcess, **connect_args) -> str:
    """Connect expecting CONNECT_ERROR; the server's message."""
    client = RecordingClient(backend.base_url)
    try:
        with pytest.raises(socketio.exceptions.ConnectionError):
            await client.connect(**connect_args)
        assert client.connects == 0
        return client.connect_errors[-1]["message"]
    finally:
        await client.close()


async def test_missing_tenant_is_refused(backend: BackendProcess, admin: Admin) -> None:
    assert await refused(backend, tenant=None) == "missing x-tenant-id header"
    assert await refused(backend, tenant="") == "missing x-tenant-id header"
    records = await admin.items("handshakes", accepted="false")
    assert [r["refusal"] for r in records] == ["missing x-tenant-id header"] * 2


async def test_missing_os_is_refused(backend: BackendProcess) -> None:
    assert await refused(backend, os_name=None) == "missing os header"


async def test_unknown_tokens_are_refused(backend: BackendProcess) -> None:
    assert await refused(backend, auth={"token": "nope", "userId": "x"}) == "invalid token"
    assert await refused(backend, token="nope") == "invalid token"
    assert await refused(backend, headers={"Authorization": "Basic abc"}) == "invalid token"
    message = await refused(backend, token="token-alice", auth={"token": "token-bob"})
    assert message.startswith("invalid token")


async def test_anonymous_viewer_is_accepted_and_recorded(
    backend: BackendProcess, admin: Admin
) -> None:
    client = RecordingClient(backend.base_url)
    try:
        await client.connect(tenant="onlivev2", os_name="linuxstb",
                             headers={"User-Agent": "interactived-test"})
        sid = client.sio.get_sid()
        [record] = await admin.items("handshakes", sid=sid)
        assert record["accepted"] is True and record["refusal"] is None
        assert record["tenant"] == "onlivev2" and record["os"] == "linuxstb"
        assert record["authorization"] is None and record["auth"] is None
        assert record["userId"] is None and record["userAgent"] == "interactived-test"
        assert "EIO=4" in record["query"] and record["transport"] == "websocket"
        sockets = (await admin.get("sockets"))["items"]
        assert [(s["sid"], s["userId"], s["tenant"]) for s in sockets] == [(sid, None, "onlivev2")]
    finally:
        await client.close()
    reply = await admin.poll("handshakes", lambda r: r["items"][0]["disconnectedAt"], sid=sid)
    [record] = reply["items"]
    assert record["disconnectedAt"] >= record["time"] and record["disconnectReason"]


@pytest.mark.parametrize(
    "connect_args",
    [
        {"auth": {"token": "token-alice", "userId": "alice"}},
        {"token": "token-alice"},
        {"token": "token-alice", "auth": {"token": "token-alice", "userId": "alice"}},
    ],
    ids=["auth-payload", "bearer-header", "both"],
)
async def test_known_token_names_the_user(
    backend: BackendProcess, admin: Admin, connect_args: dict
) -> None:
    client = RecordingClient(backend.base_url)
    try:
        await client.connect(**connect_args)
        [record] = await admin.items("handshakes", sid=client.sio.get_sid())
        assert record["userId"] == "alice"
        assert record["auth"] == connect_args.get("auth")
        if "token" in connect_args:
            assert record["authorization"] == "Bearer token-alice"
    finally:
        await client.close()

