"""The browser's one DevTools pipe, shared by the player and the clients of its DevTools socket.

Chromium runs with ``--remote-debugging-pipe``: only the player holds the other ends, so no other
process can speak DevTools to it. A test (or a developer) that needs its own DevTools connection
gets one through ``--devtools-socket PATH``: a Unix socket of mode 0600 that accepts only peers of
the player's own uid or root. Each client sees a DevTools connection of its own (NUL-separated
JSON, as on the pipe): its command ids are renumbered on the way in and restored on the way out,
the events of the sessions it attached (and of their auto-attached children) go to it alone, the
browser's other events go to everyone, and its sessions are detached when it leaves.
"""

from __future__ import annotations

import abc
import asyncio
import itertools
import logging
from pathlib import Path
from typing import Optional

from playercore.private_socket import serve_private

from .channel import MAX_MESSAGE_BYTES, Message, MessageChannel, NulFramedChannel

log = logging.getLogger(__name__)

# A client that leaves this much of the browser's output unread is disconnected.
MAX_CLIENT_BACKLOG = 64 << 20


class _Port(abc.ABC):
    """One side that speaks to the browser: the player's own connection or a socket client."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False

    @abc.abstractmethod
    def deliver(self, message: Message) -> None:
        """A message of the browser's for this side."""


class _PlayerPort(_Port):
    """The player's own connection, in this process: a :class:`MessageChannel`."""

    def __init__(self, mux: "DevToolsMux") -> None:
        super().__init__("player")
        self._mux = mux
        self._inbox: asyncio.Queue[Optional[Message]] = asyncio.Queue()

    def deliver(self, message: Message) -> None:
        self._inbox.put_nowait(message)

    def end(self) -> None:
        self.closed = True
        self._inbox.put_nowait(None)

    async def send(self, message: Message) -> None:
        if self.closed:
            raise ConnectionError("the browser connection is closed")
        await self._mux._forward(self, message)

    async def receive(self) -> Optional[Message]:
        if self.closed and self._inbox.empty():
            return None
        return await self._inbox.get()

    async def close(self) -> None:
        await self._mux.close()


class _SocketPort(_Port):
    """A client of the DevTools socket."""

    def __init__(self, name: str, channel: NulFramedChannel) -> None:
        super().__init__(name)
        self.channel = channel

    def deliver(self, message: Message) -> None:
        if self.closed:
            return
        writer = self.channel.writer
        writer.write(self.channel.encode(message))
        if writer.transport.get_write_buffer_size() > MAX_CLIENT_BACKLOG:
            log.warning("DevTools client %s leaves over %d MiB unread: disconnecting it", self.name,
                        MAX_CLIENT_BACKLOG >> 20)
            self.closed = True
            writer.transport.abort()


class DevToolsMux:
    """Routes the browser's messages between the player (:meth:`player_channel`) and the clients
    of :meth:`serve`. :meth:`start` begins reading the browser."""

    def __init__(self, browser: MessageChannel) -> None:
        self._browser = browser
        self._ids = itertools.count(1)
        self._player = _PlayerPort(self)
        self._clients: set[_SocketPort] = set()
        self._commands: dict[int, tuple[_Port, object]] = {}  # our id: the port, its id
        self._owners: dict[str, _Port] = {}  # session id: the port that attached it
        self._released: set[str] = set()  # departed clients' sessions, until the browser detached them
        self._attaching: dict[int, tuple[str, _Port]] = {}  # Target.attachToTarget not answered: target, port
        self._reading: Optional[asyncio.Task[None]] = None
        self._server: Optional[asyncio.AbstractServer] = None
        self._socket_path: Optional[Path] = None
        self._closed = False

    def player_channel(self) -> MessageChannel:
        """The player's own DevTools connection (default owner of every session)."""
        return self._player

    def start(self) -> None:
        self._reading = asyncio.get_running_loop().create_task(self._read_browser())

    async def serve(self, path: Path) -> None:
        """Listens on ``path`` (which must not exist): mode 0600, peers of this uid or root."""
        self._server = await serve_private(path, self._serve_client, MAX_MESSAGE_BYTES, "DevTools")
        self._socket_path = path

    async def close(self) -> None:
        """Stops serving (the socket removed), ends every client and the player's channel,
        closes the pipe. Once; later calls do nothing."""
        if self._closed:
            return
        self._closed = True
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._socket_path is not None:
            self._socket_path.unlink(missing_ok=True)
        for client in list(self._clients):
            client.closed = True
            client.channel.writer.transport.abort()
        if self._reading is not None:
            self._reading.cancel()
            try:
                await self._reading
            except asyncio.CancelledError:
                pass
            self._reading = None
        await self._browser.close()
        self._player.end()

    async def _serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str) -> None:
        port = _SocketPort(name, NulFramedChannel(reader, writer))
        self._clients.add(port)
        log.info("DevTools client %s connected", port.name)
        try:
            while not port.closed and (message := await port.channel.receive()) is not None:
                await self._forward(port, message)
        except ConnectionError:
            pass  # the browser is gone
        finally:
            port.closed = True
            self._clients.discard(port)
            writer.transport.abort()
            await self._release(port)
            log.info("DevTools client %s left", port.name)

    async def _forward(self, port: _Port, message: Message) -> None:
        """A command from ``port`` to the browser, under an id of ours."""
        method, params = message.get("method"), message.get("params")
        if not isinstance(method, str) or "id" not in message:
            return
        ours = next(self._ids)
        self._commands[ours] = (port, message["id"])
        if method == "Target.attachToTarget" and isinstance(params, dict):
            self._attaching[ours] = (str(params.get("targetId")), port)
        try:
            await self._browser.send({**message, "id": ours})
        except (ConnectionError, OSError) as error:
            self._commands.pop(ours, None)
            self._attaching.pop(ours, None)
            raise ConnectionError(f"the browser is gone: {error}") from error

    async def _release(self, port: _Port) -> None:
        """Detaches the sessions a departed client attached."""
        for ours in [ours for ours, (owner, _) in self._commands.items() if owner is port]:
            del self._commands[ours]
            self._attaching.pop(ours, None)
        for session in [session for session, owner in self._owners.items() if owner is port]:
            del self._owners[session]
            self._released.add(session)  # what it still says goes nowhere (not to the player)
            try:
                await self._browser.send({"id": next(self._ids), "method": "Target.detachFromTarget",
                                          "params": {"sessionId": session}})
            except (ConnectionError, OSError):
                return

    async def _read_browser(self) -> None:
        try:
            while (message := await self._browser.receive()) is not None:
                if "id" in message:
                    self._reply(message)
                else:
                    self._event(message)
        finally:
            for client in list(self._clients):
                client.closed = True
                client.channel.writer.transport.abort()
            self._player.end()

    def _reply(self, message: Message) -> None:
        ours = message["id"]
        entry = self._commands.pop(ours, None) if isinstance(ours, int) else None
        if entry is None:
            return  # a departed client's command, or our own detach of its sessions
        port, their_id = entry
        if self._attaching.pop(ours, None) is not None:
            session = (message.get("result") or {}).get("sessionId")
            if isinstance(session, str) and port is not self._player:
                self._owners[session] = port
        self._deliver(port, {**message, "id": their_id})

    def _owner(self, session: Optional[str]) -> _Port:
        return self._owners.get(session, self._player) if session else self._player

    def _event(self, message: Message) -> None:
        method, session = message.get("method"), message.get("sessionId")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if session in self._released or params.get("sessionId") in self._released:
            if method == "Target.detachedFromTarget":
                self._released.discard(params.get("sessionId"))
            elif method == "Target.attachedToTarget":  # a child of a released session: released too
                self._released.add(params.get("sessionId"))
            return
        if method == "Target.attachedToTarget":
            attached = params.get("sessionId")
            if session is not None:  # auto-attached under a session: its owner's
                owner = self._owner(session)
            else:  # a flat Target.attachToTarget of one of the ports
                target = (params.get("targetInfo") or {}).get("targetId")
                owner = next((port for pending, port in self._attaching.values() if pending == target),
                             self._player)
            if isinstance(attached, str) and owner is not self._player:
                self._owners[attached] = owner
            self._deliver(owner, message)
        elif method == "Target.detachedFromTarget":
            detached = params.get("sessionId")
            owner = self._owners.pop(detached, None) if isinstance(detached, str) else None
            self._deliver(owner or self._owner(session), message)
        elif session is not None:
            self._deliver(self._owner(session), message)
        else:  # the browser's own events: everyone's
            self._deliver(self._player, message)
            for client in list(self._clients):
                self._deliver(client, message)

    def _deliver(self, port: _Port, message: Message) -> None:
        if not port.closed:
            port.deliver(message)
