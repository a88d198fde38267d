"""A small asyncio client of Janus' WebSocket API (subprotocol ``janus-protocol``): sessions,
handles, plugin messages, trickle, keepalives, and the events Janus pushes."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import defaultdict
from typing import Any, Optional

import websockets


class JanusRequestError(RuntimeError):
    def __init__(self, code: int, reason: str) -> None:
        super().__init__(f"janus error {code}: {reason}")
        self.code = code
        self.reason = reason


class JanusClient:
    """``client = await JanusClient.connect(url)``; then ``create()``, ``attach(plugin)``,
    ``message(handle, body)``... Events for a handle (plugin ``event``s, ``webrtcup``,
    ``media``, ``hangup``, ``slowlink``) arrive on ``events(handle)``, a queue."""

    def __init__(self, socket: websockets.ClientConnection, api_secret: Optional[str], token: Optional[str]) -> None:
        self.socket = socket
        self.api_secret = api_secret
        self.token = token
        self.session_id: Optional[int] = None
        self._pending: dict[str, asyncio.Future] = {}
        self._events: dict[int, asyncio.Queue] = defaultdict(asyncio.Queue)
        self._reader = asyncio.create_task(self._read())
        self._keepalive: Optional[asyncio.Task] = None
        self.closed = asyncio.Event()

    @classmethod
    async def connect(cls, url: str, api_secret: Optional[str] = None, token: Optional[str] = None,
                      timeout: float = 5.0) -> "JanusClient":
        socket = await websockets.connect(url, subprotocols=["janus-protocol"], open_timeout=timeout, max_size=None)
        return cls(socket, api_secret, token)

    def events(self, handle: int) -> asyncio.Queue:
        return self._events[handle]

    async def _read(self) -> None:
        try:
            async for text in self.socket:
                message = json.loads(text)
                kind = message.get("janus")
                transaction = message.get("transaction")
                future = self._pending.get(transaction) if transaction else None
                if kind == "ack" and future is not None and not future.done() and getattr(future, "wants_ack", False):
                    future.set_result(message)
                    self._pending.pop(transaction, None)
                elif kind in ("success", "error", "server_info") and future is not None:
                    self._pending.pop(transaction, None)
                    if not future.done():
                        future.set_result(message)
                elif kind == "ack":
                    continue
                else:
                    sender = message.get("sender")
                    if sender is not None:
                        await self._events[sender].put(message)
        except websockets.WebSocketException:
            pass
        finally:
            self.closed.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the Janus WebSocket closed"))

    async def request(self, body: dict[str, Any], timeout: float = 10.0, ack: bool = False) -> dict[str, Any]:
        """Sends ``body`` with a new transaction; returns Janus' ``success`` (or, when ``ack``,
        the ``ack`` of an asynchronous plugin request, whose result comes as an event)."""
        transaction = secrets.token_hex(6)
        message = dict(body, transaction=transaction)
        if self.api_secret:
            message["apisecret"] = self.api_secret
        if self.token:
            message["token"] = self.token
        if self.session_id is not None and "session_id" not in message and body.get("janus") not in ("create", "info"):
            message["session_id"] = self.session_id
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        future.wants_ack = ack  # type: ignore[attr-defined]
        self._pending[transaction] = future
        await self.socket.send(json.dumps(message))
        reply = await asyncio.wait_for(future, timeout)
        if reply.get("janus") == "error":
            error = reply.get("error", {})
            raise JanusRequestError(error.get("code", 0), error.get("reason", "unknown"))
        return reply

    async def info(self) -> dict[str, Any]:
        return await self.request({"janus": "info"})

    async def create(self, keepalive_interval: float = 10.0) -> int:
        reply = await self.request({"janus": "create"})
        self.session_id = reply["data"]["id"]
        self._keepalive = asyncio.create_task(self._keep_alive(keepalive_interval))
        return self.session_id

    async def _keep_alive(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self.request({"janus": "keepalive"}, ack=True)
            except (ConnectionError, asyncio.TimeoutError, websockets.WebSocketException):
                return

    async def attach(self, plugin: str = "janus.plugin.audiobridge") -> int:
        reply = await self.request({"janus": "attach", "plugin": plugin})
        return reply["data"]["id"]

    async def message(self, handle: int, body: dict[str, Any], jsep: Optional[dict[str, Any]] = None) -> dict[str, Any]:
        """A synchronous plugin request: returns its ``plugindata.data`` (raises on its ``error``)."""
        request: dict[str, Any] = {"janus": "message", "handle_id": handle, "body": body}
        if jsep is not None:
            request["jsep"] = jsep
        reply = await self.request(request)
        data = reply.get("plugindata", {}).get("data", {})
        if "error_code" in data:
            raise JanusRequestError(data["error_code"], data.get("error", ""))
        return data

    async def send_async(self, handle: int, body: dict[str, Any], jsep: Optional[dict[str, Any]] = None) -> None:
        """An asynchronous plugin request (join, configure, leave): Janus acks; the result is an event."""
        request: dict[str, Any] = {"janus": "message", "handle_id": handle, "body": body}
        if jsep is not None:
            request["jsep"] = jsep
        await self.request(request, ack=True)

    async def trickle(self, handle: int, candidate: Optional[dict[str, Any]] = None) -> None:
        """One candidate (``{sdpMLineIndex, candidate}``), or none: ``{completed: true}``."""
        await self.request({"janus": "trickle", "handle_id": handle, "candidate": candidate or {"completed": True}}, ack=True)

    async def detach(self, handle: int) -> None:
        await self.request({"janus": "detach", "handle_id": handle})

    async def destroy(self) -> None:
        if self._keepalive is not None:
            self._keepalive.cancel()
        if self.session_id is not None:
            await self.request({"janus": "destroy"})
            self.session_id = None

    async def close(self) -> None:
        if self._keepalive is not None:
            self._keepalive.cancel()
        await self.socket.close()
        self._reader.cancel()


def plugin_data(event: dict[str, Any]) -> dict[str, Any]:
    return event.get("plugindata", {}).get("data", {})
