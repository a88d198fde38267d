"""Errors the daemon cannot address (``id: null``) against the real daemon: a request line over
1 MiB (``-32600``) or nested deeper than the daemon reads (``-32700``). The daemon answers the
requests of one connection in order, so such an error answers the oldest request it has not
answered yet; a notification gets no answer to match, so the client refuses locally what the
daemon would refuse."""

from __future__ import annotations

import asyncio
import math

import pytest

import interactived_client
from interactived_client import DaemonError

pytestmark = pytest.mark.asyncio
WAIT = 10.0
OVERSIZED = "x" * (2 << 20)


def nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


async def test_an_error_without_an_id_answers_the_oldest_request(daemon):
    async with await interactived_client.connect(daemon.socket_path) as client:
        replies = await asyncio.wait_for(asyncio.gather(
            client.call("config.get"),
            client.call("config.set", {"tenant": OVERSIZED}),
            client.call("config.set", {"deep": nested(300)}),
            client.call("config.get"), return_exceptions=True), WAIT)
        before, oversized, too_deep, after = replies
        assert before["maxClients"] == 1024 and after["maxClients"] == 1024, replies
        assert isinstance(oversized, DaemonError) and oversized.code == -32600, replies
        assert "1 MiB" in oversized.message
        assert isinstance(too_deep, DaemonError) and too_deep.code == -32700, replies
        assert (await client.call("config.get", timeout=WAIT))["tenant"] is None  # nothing was set


async def test_the_error_of_a_request_that_timed_out_does_not_answer_the_next(backend, live_daemon):
    async with await interactived_client.connect(live_daemon.socket_path) as client:
        await client.call("session.login", {"token": "token-alice", "userId": "alice",
                                            "displayName": "Alice"}, timeout=WAIT)
        await asyncio.to_thread(backend.admin_sync, "fault", {"restDelayMs": 1500})
        # Tasks start in the order they were made: the slow request is written first, and the
        # daemon reads the oversized line only once it answered it.
        slow = asyncio.create_task(client.call("interactive.status", {"mediaId": "m1"}, timeout=WAIT))
        oversized = asyncio.create_task(client.call("config.set", {"tenant": OVERSIZED}, timeout=0.3))
        with pytest.raises(asyncio.TimeoutError):
            await oversized
        # Its -32600 is still to come, before the answer to this request.
        assert (await client.call("config.get", timeout=WAIT))["maxClients"] == 1024
        assert (await asyncio.wait_for(slow, WAIT))["answered"] == []


async def test_what_the_daemon_could_not_address_is_refused_locally(daemon):
    async with await interactived_client.connect(daemon.socket_path) as client:
        with pytest.raises(ValueError, match="1 MiB"):
            await client.notify("player.viewport", {"width": 1, "pad": OVERSIZED})
        with pytest.raises(ValueError, match="deeper"):
            await client.notify("player.viewport", {"width": 1, "deep": nested(300)})
        for bad in ({"position": math.nan}, {"text": "\ud800"}):
            with pytest.raises(ValueError):
                await client.notify("player.time", bad)
            with pytest.raises(ValueError):
                await client.call("player.time", bad, timeout=WAIT)
        # Nothing was sent: the next call gets its own answer.
        assert (await client.call("config.get", timeout=WAIT))["maxClients"] == 1024
