"""Transport-level faults on Engine.IO WebSocket connections.

python-engineio's aiohttp driver wraps each WebSocket in ``engineio.async_drivers.aiohttp
.WebSocket`` (``handler``, ``send``, ``wait``, ``close``). ``install`` swaps in a subclass for
one server so that the backend can, per connection:

* **drop** it: abort the TCP connection (EOF, or RST with ``SO_LINGER`` 0) with no Engine.IO
  CLOSE, no Socket.IO DISCONNECT and no WebSocket close frame: the client sees a transport loss;
* **silence** it (``stopPings``): nothing is written to the client any more (no Engine.IO PING,
  no event, no WebSocket pong) and nothing it sends is processed, while the TCP connection stays
  open until the client gives up and closes it. The client's dead-connection detector
  (pingInterval + pingTimeout without a PING) must fire. Meanwhile the server's own ping
  timeout ends the Engine.IO session, as a real server would.

All reads go through one pump task per connection so that ``wait`` (Engine.IO's reader) and a
delayed ``close`` never read the socket concurrently. Polling connections are not wrapped and
these faults do not apply to them (the daemon uses the WebSocket transport).

``refusal_middleware`` implements ``refuseConnections: "transport"`` in front of Engine.IO.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
from typing import Any

from aiohttp import WSMsgType, web
from engineio.async_drivers import aiohttp as engineio_aiohttp

from .state import HANDSHAKE_HEADERS, BackendState, handshake_record

log = logging.getLogger("backend.transport")

#: Where the Socket.IO server is mounted.
SOCKETIO_PATH = "/socket.io/"

_DATA_TYPES = (WSMsgType.TEXT, WSMsgType.BINARY)


class ConnectionRegistry:
    """The open WebSocket connections, by Engine.IO sid."""

    def __init__(self) -> None:
        self._connections: dict[str, FaultableWebSocket] = {}

    def add(self, connection: FaultableWebSocket) -> None:
        """Track a connection once its WebSocket handshake is done."""
        self._connections[connection.eio_sid] = connection

    def remove(self, connection: FaultableWebSocket) -> None:
        """Forget a finished connection."""
        if self._connections.get(connection.eio_sid) is connection:
            del self._connections[connection.eio_sid]

    def get(self, eio_sid: str) -> FaultableWebSocket | None:
        """The connection of an Engine.IO session, if it uses a WebSocket."""
        return self._connections.get(eio_sid)

    def all(self) -> list[FaultableWebSocket]:
        """Every open connection."""
        return list(self._connections.values())

    def silenced(self) -> list[str]:
        """Engine.IO sids of the silenced connections."""
        return sorted(sid for sid, conn in self._connections.items() if conn.silenced)


class FaultableWebSocket(engineio_aiohttp.WebSocket):
    """python-engineio's aiohttp WebSocket wrapper with drop and silence faults."""

    registry: ConnectionRegistry  # set by ``install`` on a per-server subclass

    def __init__(self, handler: Any, server: Any) -> None:
        super().__init__(handler, server)
        # ``handler`` is the bound ``AsyncSocket._websocket_handler`` of this session.
        self.eio_sid: str = handler.__self__.sid
        self.silenced = False
        self._inbox: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        self._may_close = asyncio.Event()
        self._may_close.set()
        self._request: web.Request | None = None

    async def __call__(self, environ: dict[str, Any]) -> web.WebSocketResponse:
        """Accept the WebSocket and run the Engine.IO session on it."""
        self._request = environ["aiohttp.request"]
        # autoping off: WebSocket pings are answered by the pump, and not while silenced.
        self._sock = web.WebSocketResponse(
            max_msg_size=self.server.max_http_buffer_size, autoping=False
        )
        await self._sock.prepare(self._request)
        self.environ = environ
        pump = asyncio.create_task(self._pump())
        self.registry.add(self)
        try:
            await self.handler(self)
        finally:
            self.registry.remove(self)
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump
        return self._sock

    async def _pump(self) -> None:
        """Read the socket; hand data to ``wait`` unless silenced; note when the peer left."""
        try:
            while True:
                msg = await self._sock.receive()
                if msg.type in _DATA_TYPES:
                    if not self.silenced:
                        self._inbox.put_nowait(msg.data)
                elif msg.type == WSMsgType.PING:
                    if not self.silenced:
                        await self._sock.pong(msg.data)
                elif msg.type != WSMsgType.PONG:
                    break  # CLOSE, CLOSING, CLOSED or ERROR: the connection is over
        except (ConnectionError, RuntimeError) as exc:
            log.debug("%s: read ended: %s", self.eio_sid, exc)
        finally:
            self._inbox.put_nowait(None)
            self._may_close.set()

    async def wait(self) -> str | bytes:
        """The next Engine.IO packet from the client; OSError once the connection is over."""
        data = await self._inbox.get()
        if data is None:
            self._inbox.put_nowait(None)  # every later call ends too
            raise OSError("WebSocket connection closed")
        return data

    async def send(self, message: str | bytes) -> None:
        """Send a packet, or drop it while silenced."""
        if self.silenced:
            return
        if isinstance(message, bytes):
            await self._sock.send_bytes(message)
        else:
            await self._sock.send_str(message)

    async def close(self) -> None:
        """Close, but a silenced connection only once the client has hung up (or is released)."""
        await self._may_close.wait()
        await self._sock.close()

    def silence(self, on: bool) -> None:
        """Start (True) or stop (False) silencing this connection."""
        self.silenced = on
        if on:
            self._may_close.clear()
        else:
            self._may_close.set()

    def drop(self, mode: str) -> None:
        """Abort the TCP connection: ``"eof"`` closes it, ``"rst"`` resets it."""
        transport = self._request.transport if self._request else None
        if transport is None:
            return
        if mode == "rst":
            sock = transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()


def install(eio_server: Any, registry: ConnectionRegistry) -> None:
    """Make ``eio_server`` (a python-engineio AsyncServer in aiohttp mode) use
    ``FaultableWebSocket`` connections tracked in ``registry``."""
    connection_class = type("BackendWebSocket", (FaultableWebSocket,), {"registry": registry})
    # ``_async`` is the driver's shared module dict: copy it so only this server changes.
    eio_server._async = {**eio_server._async, "websocket": connection_class}


def refusal_middleware(state: BackendState) -> Any:
    """aiohttp middleware for ``refuseConnections: "transport"``: new Engine.IO connections
    (requests to /socket.io/ without a ``sid``) get HTTP 503 before any WebSocket upgrade, so
    the client sees a transport failure rather than a Socket.IO CONNECT_ERROR."""

    @web.middleware
    async def middleware(request: web.Request, handler: Any) -> web.StreamResponse:
        if (
            state.faults.refuseConnections == "transport"
            and request.path.startswith(SOCKETIO_PATH)
            and "sid" not in request.query
        ):
            headers = {name: request.headers.get(name) for name in HANDSHAKE_HEADERS}
            state.log("handshakes").append(
                handshake_record(
                    sid=None,
                    eio_sid=None,
                    refusal="transport: HTTP 503",
                    headers=headers,
                    auth=None,
                    user_id=None,
                    query=request.query_string,
                    transport=request.query.get("transport", "polling"),
                )
            )
            log.info("refused an Engine.IO connection with HTTP 503 (fault)")
            return web.Response(status=503, text="Service Unavailable (refuseConnections fault)\n")
        return await handler(request)

    return middleware
