"""The DevTools client (webplayer/cdp.py) over an in-memory channel, without a browser: a
command cancelled while its reply arrives ends cancelled, as the player's stop needs."""

from __future__ import annotations

import asyncio
from typing import Any, Optional

import pytest

from webplayer.cdp import CDPConnection

pytestmark = pytest.mark.asyncio


class MemoryChannel:
    """A MessageChannel whose browser is the test: ``sent`` holds the commands, ``feed`` answers."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.command_sent = asyncio.Event()
        self._incoming: asyncio.Queue[Optional[dict[str, Any]]] = asyncio.Queue()

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        self.command_sent.set()

    async def receive(self) -> Optional[dict[str, Any]]:
        return await self._incoming.get()

    async def close(self) -> None:
        self._incoming.put_nowait(None)

    def feed(self, *messages: dict[str, Any]) -> None:
        for message in messages:
            self._incoming.put_nowait(message)


async def test_a_command_cancelled_as_its_reply_arrives_ends_cancelled():
    channel = MemoryChannel()
    cdp = CDPConnection(channel)
    command = asyncio.get_running_loop().create_task(cdp.send("Runtime.evaluate", {"expression": "1"}))
    await asyncio.wait_for(channel.command_sent.wait(), 5)
    # The reader takes the reply, then (in the same step: both are queued) the event, whose
    # handler cancels the command: its reply is there, it has not resumed yet. That is the
    # player's stop cancelling the drawing task while the page's answer comes in.
    cdp.on_event(lambda method, params, session: command.cancel())
    channel.feed({"id": channel.sent[0]["id"], "result": {"result": {"value": 1}}},
                 {"method": "Runtime.consoleAPICalled", "params": {}})
    await asyncio.wait([command], timeout=5)
    try:
        assert command.done() and command.cancelled(), "the cancellation was lost: the command went on"
    finally:
        await cdp.close()


async def test_a_command_without_a_reply_times_out():
    channel = MemoryChannel()
    cdp = CDPConnection(channel)
    try:
        with pytest.raises(asyncio.TimeoutError):
            await cdp.send("Runtime.evaluate", {"expression": "1"}, timeout=0.2)
    finally:
        await cdp.close()
