"""A small Chrome DevTools Protocol client: one message channel to the browser, flat sessions."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from typing import Any, Optional

from .channel import MessageChannel, NulFramedChannel

log = logging.getLogger(__name__)

EventHandler = Callable[[str, dict[str, Any], Optional[str]], None]


class CDPError(Exception):
    """A DevTools command answered with an error."""

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(f"{method}: {error.get('message')} ({error.get('code')})")
        self.error = error


class CDPConnection:
    """Commands with replies (``send``) and events to one handler, for the browser target and
    every session attached with ``flatten: true`` (``session_id``)."""

    def __init__(self, channel: MessageChannel) -> None:
        self._channel = channel
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._handlers: list[EventHandler] = []
        self._reading = asyncio.get_running_loop().create_task(self._read())
        self.closed = asyncio.Event()

    @classmethod
    async def open_unix(cls, path: str) -> "CDPConnection":
        """A connection through the player's DevTools socket (``--devtools-socket``)."""
        async with asyncio.timeout(10):
            return cls(await NulFramedChannel.connect_unix(path))

    def on_event(self, handler: EventHandler) -> None:
        """``handler(method, params, session_id)`` for every event, in arrival order."""
        self._handlers.append(handler)

    async def send(self, method: str, params: Optional[dict[str, Any]] = None,
                   session_id: Optional[str] = None, timeout: float = 30.0) -> dict[str, Any]:
        """Runs a command and returns its result (bounded by ``timeout`` seconds).

        Bounded with ``asyncio.timeout``, never ``asyncio.wait_for``: in Python 3.11, a task
        cancelled while the reply it waits for has just arrived gets that reply from
        ``wait_for`` and goes on as if it had not been cancelled (the player's stop cancels the
        drawing task, which then never ended)."""
        if self.closed.is_set():
            raise ConnectionError("the browser connection is closed")
        command_id = next(self._ids)
        message: dict[str, Any] = {"id": command_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[command_id] = (method, future)
        try:
            await self._channel.send(message)
            async with asyncio.timeout(timeout):
                return await future
        finally:
            self._pending.pop(command_id, None)

    async def close(self) -> None:
        self._reading.cancel()
        try:
            await self._reading
        except asyncio.CancelledError:
            pass
        await self._channel.close()
        self._fail_pending()

    async def _read(self) -> None:
        try:
            while (message := await self._channel.receive()) is not None:
                if "id" in message:
                    method, future = self._pending.get(message["id"], ("", None))
                    if future is None or future.done():
                        continue
                    if "error" in message:
                        future.set_exception(CDPError(method, message["error"]))
                    else:
                        future.set_result(message.get("result", {}))
                else:
                    for handler in self._handlers:
                        try:
                            handler(message.get("method", ""), message.get("params", {}),
                                    message.get("sessionId"))
                        except Exception:  # one bad handler must not stop the reader
                            log.exception("DevTools event handler failed")
        finally:
            self._fail_pending()

    def _fail_pending(self) -> None:
        self.closed.set()
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the browser connection closed"))
