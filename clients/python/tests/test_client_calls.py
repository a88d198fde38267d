"""Requests, replies and errors against the real daemon."""

from __future__ import annotations

import asyncio

import pytest

import interactived_client
from interactived_client import ConnectionClosed, DaemonError

pytestmark = pytest.mark.asyncio
WAIT = 10.0


async def test_connect_says_hello(daemon):
    client = await interactived_client.connect(daemon.socket_path, client="pytest")
    try:
        assert client.hello["daemon"] == "interactived"
        assert client.hello["protocol"] == interactived_client.PROTOCOL
        assert client.hello["role"] == "control"
        assert "overlay.bridge" in client.hello["capabilities"]
        status = await client.call("daemon.status", timeout=WAIT)
        assert status["bootId"] == client.hello["bootId"]
    finally:
        await client.close()
    assert client.closed


async def test_daemon_error_carries_code_and_name(daemon):
    async with await interactived_client.connect(daemon.socket_path) as client:
        with pytest.raises(DaemonError) as raised:
            await client.call("room.leave", timeout=WAIT)
        assert raised.value.code == -32000
        assert raised.value.name == "interactive.NoRoom"
        with pytest.raises(DaemonError) as raised:
            await client.call("room.join", {"mediaId": "m1"}, timeout=WAIT)
        assert raised.value.name == "interactive.NotConfigured"
        assert "tenant" in raised.value.data["missing"]


async def test_protocol_errors_have_a_code_and_no_name(daemon):
    async with await interactived_client.connect(daemon.socket_path) as client:
        with pytest.raises(DaemonError) as raised:
            await client.call("no.such", timeout=WAIT)
        assert (raised.value.code, raised.value.name) == (-32601, None)
        with pytest.raises(DaemonError) as raised:
            await client.call("config.set", {"maxClients": 3}, timeout=WAIT)
        assert raised.value.code == -32602
        assert "maxClients" in raised.value.message
        # The connection stays usable after errors.
        assert (await client.call("config.get", timeout=WAIT))["maxClients"] == 1024


async def test_concurrent_calls_get_their_own_replies(daemon):
    async with await interactived_client.connect(daemon.socket_path) as client:
        tenants = [f"tenant-{n}" for n in range(20)]
        replies = await asyncio.wait_for(asyncio.gather(
            *(client.call("config.set", {"tenant": tenant}) for tenant in tenants)), WAIT)
        assert [reply["tenant"] for reply in replies] == tenants


async def test_notification_gets_no_reply_and_is_applied(daemon):
    async with await interactived_client.connect(daemon.socket_path) as client:
        await client.notify("player.viewport", {"width": 1280, "height": 720})
        reply = await client.call("player.viewport", {"width": 640, "height": 360}, timeout=WAIT)
        assert reply == {"width": 640, "height": 360}


async def test_pending_call_fails_when_the_daemon_stops(daemon):
    client = await interactived_client.connect(daemon.socket_path)
    try:
        daemon.process.terminate()
        with pytest.raises(ConnectionClosed):
            for _ in range(100):  # bounded: the daemon closes the connection within 5 s
                await client.call("daemon.status", timeout=WAIT)
                await asyncio.sleep(0.05)
        assert client.closed
        with pytest.raises(ConnectionClosed):
            await client.call("daemon.status")
    finally:
        await client.close()


async def test_connect_to_nothing_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        await interactived_client.connect(str(tmp_path / "missing.sock"))
