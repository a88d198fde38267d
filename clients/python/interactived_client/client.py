"""The connection to interactived: requests with replies, notifications and the event stream."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from typing import Any, Optional, Sequence

from .errors import ConnectionClosed, DaemonError
from .events import EventStream
from .paths import default_socket_path
from .voice import VoiceRoom

PROTOCOL = 1
# The daemon's lines are at most 1 MiB; a status snapshot with many overlays stays well below.
LINE_LIMIT = 16 << 20
#: The daemon's limits of what it reads (docs/ipc.md, "Limits"): a request line of at most 1 MiB
#: (without its newline) and JSON nested at most 256 levels deep. Past either it answers with an
#: error whose ``id`` is null, since it could not read the request's.
MAX_REQUEST_BYTES = 1 << 20
MAX_NESTING = 256


class Client:
    """One connection to the daemon. Made by :func:`connect`; usable as ``async with``.

    Calls may run concurrently from several tasks; the daemon answers them in the order they
    were sent. An error the daemon could not address (``id: null``: a line over 1 MiB, JSON it
    could not parse) therefore answers the oldest request it has not answered yet. One event
    stream at a time per connection (the daemon keeps one subscription per connection); open a
    second connection for a second filter.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        # The ids of the requests written and not answered yet, oldest first (those whose caller
        # stopped waiting included: their answer is still to come, in its place).
        self._unanswered: deque[int] = deque()
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

        Raises :class:`DaemonError` for an error reply (``-32600`` for a request line over the
        daemon's 1 MiB, ``-32700`` for JSON nested deeper than it reads), :class:`ConnectionClosed`
        when the connection ends first, ``asyncio.TimeoutError`` after ``timeout`` seconds of
        writing and waiting (None: as long as the daemon takes; a VOD ``room.join`` may take
        ``httpTimeoutMs``; a request already written is still answered, and that answer is
        dropped), and
        ``ValueError`` without sending anything for params JSON cannot carry (NaN, infinities,
        text that is not Unicode: lone surrogates).
        """
        self._check_open()
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        line = _encode(message)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            return await asyncio.wait_for(self._exchange(line, request_id, future), timeout)
        finally:
            self._pending.pop(request_id, None)

    async def _exchange(self, line: bytes, request_id: int, future: asyncio.Future[Any]) -> Any:
        """Writes a request and waits for its answer (the caller's timeout covers both)."""
        await self._send(line, request_id)
        return await future

    async def notify(self, method: str, params: Optional[dict[str, Any]] = None) -> None:
        """Sends a notification (no reply), e.g. ``player.time`` several times a second.

        The daemon's answer to a notification it cannot read (``id: null``) could not be told
        from a request's, so what it would refuse is refused here with ``ValueError``, without
        sending anything: a line over 1 MiB, JSON nested deeper than 256 levels, and what
        :meth:`call` refuses.
        """
        self._check_open()
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        line = _encode(message)
        if len(line) - 1 > MAX_REQUEST_BYTES:
            raise ValueError(f"a notification of {len(line) - 1} bytes: the daemon reads lines of at most 1 MiB")
        if _nesting(message) > MAX_NESTING:
            raise ValueError(f"a notification nested deeper than the daemon reads ({MAX_NESTING} levels)")
        await self._send(line, None)

    def events(self, types: Optional[Sequence[str]] = None, *, since: Optional[int] = None,
               boot_id: Optional[str] = None, buffer_size: int = 4096) -> EventStream:
        """The event stream: ``async for event in client.events(types=["overlay."])``.

        ``types`` are prefixes (None: everything); ``since``/``boot_id`` replay what the daemon
        still holds after that seq of that boot (``events.lagged`` first when it does not). See
        :class:`EventStream` for the snapshot and for resuming.
        """
        return EventStream(self, types, since, boot_id, buffer_size)

    async def voice_join(self, room: str, *, muted: bool = False, pin: Optional[str] = None,
                         display: Optional[str] = None, timeout_ms: Optional[int] = None,
                         timeout: Optional[float] = None) -> VoiceRoom:
        """``voice.join``: joins the voice room ``room`` (leaving another one), muted or not,
        with the room's ``pin`` (a secret: the daemon never logs it) and the ``display`` name the
        others see (default: the viewer's). Returns the room once joined (``selfId``,
        ``participants``), or ``connecting`` after ``timeout_ms`` while the daemon keeps trying.
        :class:`DaemonError` names ``interactive.BackendRefused`` (a wrong pin, a full room),
        ``interactive.BackendUnreachable``, ``interactive.VoiceUnavailable`` (``data["reason"]``),
        ``interactive.NotConfigured`` (no ``voiceUrl``), ``interactive.NoRoom``."""
        params: dict[str, Any] = {"room": room, "muted": muted}
        if display is not None:
            params["display"] = display
        if pin is not None:
            params["pin"] = pin
        if timeout_ms is not None:
            params["timeoutMs"] = timeout_ms
        result = await self.call("voice.join", params, timeout=timeout)
        joined = VoiceRoom.from_status(result)
        if joined is None:
            raise DaemonError(-32603, f"voice.join answered what is not a voice room: {result!r}")
        return joined

    async def voice_leave(self, timeout: Optional[float] = None) -> dict[str, Any]:
        """``voice.leave``: ``{room, state: "left"}``; ``interactive.NoRoom`` when in no voice room."""
        return await self.call("voice.leave", timeout=timeout)

    async def voice_mute(self, muted: bool, timeout: Optional[float] = None) -> dict[str, Any]:
        """``voice.mute``: muted, the others see it and nothing leaves the box; ``{room, muted}``
        (:meth:`VoiceRoom.apply_mute` takes it)."""
        return await self.call("voice.mute", {"muted": muted}, timeout=timeout)

    async def voice_status(self, timeout: Optional[float] = None) -> Optional[VoiceRoom]:
        """``daemon.status``'s ``voice``: the room with every participant, or None."""
        return VoiceRoom.from_status((await self.call("daemon.status", timeout=timeout)).get("voice"))

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

    async def _send(self, line: bytes, request_id: Optional[int]) -> None:
        """Writes one line; ``request_id`` is a request's, in the order the daemon will answer."""
        async with self._write_lock:
            self._check_open()
            if request_id is not None:
                self._unanswered.append(request_id)
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
        if "id" not in message:
            return
        request_id = message["id"]
        if request_id is None:
            if "error" not in message or not self._unanswered:
                return
            request_id = self._unanswered.popleft()  # the daemon answers in order
        elif request_id in self._unanswered:
            self._unanswered.remove(request_id)  # the oldest, while the daemon answers in order
        future = self._pending.get(request_id)
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
        self._unanswered.clear()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed(str(self._closed)))
        if self._stream is not None:
            self._stream._finish(StopAsyncIteration() if reason is None else reason)


def _encode(message: dict[str, Any]) -> bytes:
    """One line of strict JSON in UTF-8; ``ValueError`` for what JSON cannot carry."""
    try:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError as error:
        raise ValueError(f"text that is not Unicode (a lone surrogate): {error.reason}") from None


def _nesting(value: Any) -> int:
    """How deep objects and arrays nest in ``value``, counted as the daemon counts (``{}`` is 1)."""
    depth, level = 0, [value]
    while containers := [item for item in level if isinstance(item, (dict, list, tuple))]:
        depth += 1
        level = [child for item in containers for child in (item.values() if isinstance(item, dict) else item)]
    return depth


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
