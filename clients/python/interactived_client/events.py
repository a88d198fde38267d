"""The event stream of one connection (``events.subscribe``)."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING, Any, Optional, Sequence

from .errors import ConnectionClosed

if TYPE_CHECKING:
    from .client import Client

Event = dict[str, Any]


class EventStream:
    """The daemon's events as an async iterator of dicts ``{type, seq, data, bootId, time}``.

    Made by :meth:`Client.events`. The first ``__anext__`` (or :meth:`open`) subscribes;
    afterwards ``snapshot`` holds what ``daemon.status`` returned at that moment and ``seq`` the
    last event it covers, so a player draws the snapshot and then applies the events.
    ``events.lagged`` comes through as an event (``seq`` None, ``data.missed``), both when the
    daemon dropped events for this connection and when this stream's own buffer
    (``buffer_size`` events) overflowed because the caller did not read. ``last_seq`` and
    ``boot_id`` are what to pass as ``since``/``boot_id`` to resume on a new connection.
    Iteration ends when the stream or the client is closed and raises
    :class:`ConnectionClosed` when the daemon goes away.
    """

    def __init__(self, client: "Client", types: Optional[Sequence[str]], since: Optional[int],
                 boot_id: Optional[str], buffer_size: int) -> None:
        self._client = client
        self._types = list(types) if types is not None else None
        self._since = since
        self._requested_boot_id = boot_id
        self._buffer: deque[Event] = deque()
        self._buffer_size = max(1, buffer_size)
        self._dropped = 0
        self._ready = asyncio.Event()
        self._end: Optional[BaseException] = None
        self._opened = False
        self.snapshot: Optional[dict[str, Any]] = None
        self.boot_id: Optional[str] = None
        self.seq: Optional[int] = None
        self.last_seq: Optional[int] = since

    async def open(self) -> dict[str, Any]:
        """Subscribes (once) and returns the snapshot."""
        if not self._opened:
            self._opened = True
            params: dict[str, Any] = {}
            if self._types is not None:
                params["types"] = self._types
            if self._since is not None:
                params["since"] = self._since
            if self._requested_boot_id is not None:
                params["bootId"] = self._requested_boot_id
            self._client._attach(self)
            try:
                reply = await self._client.call("events.subscribe", params)
            except BaseException:
                self._client._detach(self)
                raise
            self.snapshot = reply.get("snapshot")
            self.boot_id = reply.get("bootId")
            self.seq = reply.get("seq")
            if self.last_seq is None or self._requested_boot_id not in (None, self.boot_id):
                self.last_seq = self.seq
        return self.snapshot or {}

    async def close(self) -> None:
        """Unsubscribes (when the connection is still open) and ends the iteration."""
        if self._end is None:
            self._finish(StopAsyncIteration())
            self._client._detach(self)
            if not self._client.closed:
                await self._client.call("events.unsubscribe")

    def __aiter__(self) -> "EventStream":
        return self

    async def __anext__(self) -> Event:
        await self.open()
        while True:
            if self._buffer:
                event = self._buffer.popleft()
                break
            if self._dropped:
                event = _lagged(self._dropped)
                self._dropped = 0
                break
            if isinstance(self._end, StopAsyncIteration):
                raise StopAsyncIteration
            if self._end is not None:
                raise ConnectionClosed(str(self._end))
            self._ready.clear()
            await self._ready.wait()
        if isinstance(event.get("seq"), int):
            self.last_seq = event["seq"]
            self.boot_id = event.get("bootId", self.boot_id)
        return event

    def _deliver(self, params: Any) -> None:
        """Called by the client's reader for every ``event`` notification."""
        if self._end is not None or not isinstance(params, dict):
            return
        event = dict(params)
        event.setdefault("seq", None)
        if not isinstance(event.get("data"), dict):
            event["data"] = {}
        if len(self._buffer) >= self._buffer_size:
            self._dropped += 1
            return
        if self._dropped:
            self._buffer.append(_lagged(self._dropped))
            self._dropped = 0
        self._buffer.append(event)
        self._ready.set()

    def _finish(self, reason: BaseException) -> None:
        """Ends the iteration once the buffered events are read."""
        if self._end is None:
            self._end = reason
            self._ready.set()


def _lagged(missed: int) -> Event:
    return {"type": "events.lagged", "seq": None, "data": {"missed": missed}}

