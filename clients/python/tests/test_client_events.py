"""The event stream: snapshot, filters, replay, lagged, end of the connection."""

from __future__ import annotations

import asyncio

import pytest

import interactived_client
from interactived_client import ConnectionClosed

pytestmark = pytest.mark.asyncio
WAIT = 10.0


async def next_event(stream):
    return await asyncio.wait_for(stream.__anext__(), WAIT)


async def test_snapshot_then_filtered_events_with_seq(daemon):
    async with await interactived_client.connect(daemon.socket_path) as client:
        stream = client.events(types=["config."])
        snapshot = await asyncio.wait_for(stream.open(), WAIT)
        assert snapshot["bootId"] == client.hello["bootId"] == stream.boot_id
        assert snapshot["session"]["loggedIn"] is False
        await client.call("session.login", {"token": "t", "userId": "u", "displayName": "U"},
                          timeout=WAIT)
        await client.call("config.set", {"tenant": "one"}, timeout=WAIT)
        await client.call("config.set", {"tenant": "two"}, timeout=WAIT)
        first, second = await next_event(stream), await next_event(stream)
        assert [first["type"], second["type"]] == ["config.changed", "config.changed"]
        assert [first["data"], second["data"]] == [{"tenant": "one"}, {"tenant": "two"}]
        # session.state was filtered out, so the seqs jump over it but keep rising.
        assert stream.seq < first["seq"] < second["seq"]
        assert second["seq"] - stream.seq == 3
        assert stream.last_seq == second["seq"]
        assert second["bootId"] == stream.boot_id


async def test_since_replays_what_a_reconnecting_client_missed(daemon):
    async with await interactived_client.connect(daemon.socket_path) as first:
        stream = first.events()
        await asyncio.wait_for(stream.open(), WAIT)
        mark, boot = stream.last_seq, stream.boot_id
        await first.call("config.set", {"tenant": "missed"}, timeout=WAIT)
    async with await interactived_client.connect(daemon.socket_path) as second:
        replay = second.events(types=["config."], since=mark, boot_id=boot)
        event = await next_event(replay)
        assert event["type"] == "config.changed"
        assert event["data"] == {"tenant": "missed"}
        assert event["seq"] == mark + 1


async def test_daemon_lagged_is_surfaced_for_another_boot(daemon):
    async with await interactived_client.connect(daemon.socket_path) as client:
        stream = client.events(since=5, boot_id="not-this-boot")
        event = await next_event(stream)
        assert event["type"] == "events.lagged"
        assert event["seq"] is None
        assert "missed" in event["data"]


async def test_local_buffer_overflow_becomes_lagged(daemon):
    async with await interactived_client.connect(daemon.socket_path) as client:
        stream = client.events(types=["config."], buffer_size=2)
        await asyncio.wait_for(stream.open(), WAIT)
        for n in range(5):
            await client.call("config.set", {"tenant": f"t{n}"}, timeout=WAIT)
        await client.call("daemon.status", timeout=WAIT)  # every event line has been read
        events = [await next_event(stream) for _ in range(3)]
        assert [event["data"].get("tenant") for event in events[:2]] == ["t0", "t1"]
        assert events[2] == {"type": "events.lagged", "seq": None, "data": {"missed": 3}}


async def test_async_for_ends_on_close_and_raises_when_the_daemon_goes(daemon):
    client = await interactived_client.connect(daemon.socket_path)
    seen = []
    stream = client.events(types=["config."])
    await asyncio.wait_for(stream.open(), WAIT)

    async def read_all():
        async for event in stream:
            seen.append(event["type"])

    reader = asyncio.create_task(read_all())
    await client.call("config.set", {"tenant": "x"}, timeout=WAIT)
    for _ in range(100):
        if seen:
            break
        await asyncio.sleep(0.05)
    await client.close()
    await asyncio.wait_for(reader, WAIT)  # ends without an exception
    assert seen == ["config.changed"]

    client = await interactived_client.connect(daemon.socket_path)
    try:
        stream = client.events()
        await asyncio.wait_for(stream.open(), WAIT)
        daemon.process.terminate()
        with pytest.raises(ConnectionClosed):
            for _ in range(1000):  # bounded: the stream ends once the socket closes
                await next_event(stream)
    finally:
        await client.close()


async def test_one_stream_per_connection_and_unsubscribe(daemon):
    async with await interactived_client.connect(daemon.socket_path) as client:
        stream = client.events(types=["config."])
        await asyncio.wait_for(stream.open(), WAIT)
        with pytest.raises(RuntimeError):
            await client.events().open()
        await asyncio.wait_for(stream.close(), WAIT)
        again = client.events(types=["config."])
        await asyncio.wait_for(again.open(), WAIT)
        await client.call("config.set", {"tenant": "after"}, timeout=WAIT)
        assert (await next_event(again))["data"] == {"tenant": "after"}
