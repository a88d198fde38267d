"""The connection to interactived: requests with replies, notifications and the event stream."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Optional, Sequence

from .errors import ConnectionClosed, DaemonError
from .events import EventStream
from .paths import default_socket_path

PROTOCOL = 1
# The daemon's lines are at most 1 MiB; a status snapshot with many overlays stays well below.
LINE_LIMIT = 16 << 20


class Client:
    """One connection to the daemon. Made by :func:`connect`; usable as ``async with``.

    Calls may run concurrently from several tasks; the daemon answers them in the order they
    were sent. One event stream at a time per connection (the daemon keeps one subscription
    per connection); open a second connection for a second filter.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._stream: Optional[EventStream] = None
        self._closed: Optional[BaseException] = None
        self._write_lock = asyncio.Lock()
        self._reading = asyncio.get_running_loop().create_task(self._read_replies_and_events())
        self.hello: dict[str, Any] = {}
        """The ``daemon.hello`` result: ``bootId``, ``role``, ``version``, ``capabilities``."""

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (by :meth:`close` or by the daemon)."""
        return self._closed is not None

    async def call(self, method: str, params: Optional[dict[str, Any]] = None,
                   timeout: Optional[float] = None) -> Any:
        """Sends a request and returns its ``result``.

        Raises :class:`DaemonError` for an error reply, :class:`ConnectionClosed` when the
        connection ends first, ``asyncio.TimeoutError`` after ``timeout`` seconds (None: wait
        as long as the daemon takes; a VOD ``room.join`` may take ``httpTimeoutMs``).
        """
        self._check_open()
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._send(message)
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: Optional[dict[str, Any]] = None) -> None:
        """Sends a notification (no reply), e.g. ``player.time`` several times a second."""
        self._check_open()
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)

    def events(self, types: Optional[Sequence[str]] = None, *, since: Optional[int] = None,
               boot_id: Optional[str] = None, buffer_size: int = 4096) -> EventStream:
        """The event stream: ``async for event in client.events(types=["overlay."])``.

        ``types`` are prefixes (None: everything); ``since``/``boot_id`` replay what the daemon
        still holds after that seq of that boot (``events.lagged`` first when it does not). See
        :class:`EventStream` for the snapshot and for resuming.
        """
        return EventStream(self, types, since, boot_id, buffer_size)

    async def close(self) -> None:
        """Closes the connection; pending calls fail and event streams end."""
        self._shut(None)
        self._reading.cancel()
        try:
            await self._reading
        except asyncio.CancelledError:
            pass
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()

    def _attach(self, stream: EventStream) -> None:
        self._check_open()
        if self._stream is not None and self._stream is not stream:
            raise RuntimeError("this connection already has an event stream; close it first")
        self._stream = stream

    def _detach(self, stream: EventStream) -> None:
        if self._stream is stream:
            self._stream = None

    def _check_open(self) -> None:
        if self._closed is not None:
            raise ConnectionClosed(str(self._closed) or "the connection is closed")

    async def _send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        async with self._write_lock:
            self._writer.write(line)
            try:
                await self._writer.drain()
            except (ConnectionError, OSError) as error:
                self._shut(ConnectionClosed(f"writing to the daemon failed: {error}"))
                raise ConnectionClosed(str(error)) from error

    async def _read_replies_and_events(self) -> None:
        reason: BaseException = ConnectionClosed("the daemon closed the connection")
        try:
            while line := await self._reader.readline():
                self._dispatch(line)
        except (ConnectionError, OSError, ValueError, asyncio.LimitOverrunError) as error:
            reason = ConnectionClosed(f"reading from the daemon failed: {error}")
        self._shut(reason)

    def _dispatch(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        if message.get("method") == "event":
            if self._stream is not None:
                self._stream._deliver(message.get("params"))
            return
        future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
        if future is None or future.done():
            return
        if "error" in message:
            future.set_exception(DaemonError.from_reply(message["error"]))
        else:
            future.set_result(message.get("result"))

    def _shut(self, reason: Optional[BaseException]) -> None:
        """Marks the connection closed: ``reason`` None for a local close."""
        if self._closed is not None:
            return
        self._closed = reason or ConnectionClosed("the connection was closed")
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed(str(self._closed)))
        if self._stream is not None:
            self._stream._finish(StopAsyncIteration() if reason is None else reason)


async def connect(path: Optional[str] = None, *, client: str = "interactived_client",
                  timeout: Optional[float] = 10.0) -> Client:
    """Connects to the daemon's socket and says ``daemon.hello``.

    ``path`` defaults to ``$INTERACTIVED_SOCKET``, else ``/run/interactived/interactived.sock``
    when it exists, else ``$XDG_RUNTIME_DIR/interactived.sock``. ``client`` names this program
    in the daemon's log. Raises ``OSError`` when nothing listens there.
    """
    reader, writer = await asyncio.wait_for(
        asyncio.open_unix_connection(path or default_socket_path(), limit=LINE_LIMIT), timeout)
    connection = Client(reader, writer)
    try:
        connection.hello = await connection.call(
            "daemon.hello", {"client": client, "protocol": PROTOCOL}, timeout=timeout)
    except BaseException:
        await connection.close()
        raise
    return connection
