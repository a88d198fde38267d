"""A scripted stand-in for the daemon's voice room, for the client's voice tests: a JSON-lines
Unix-socket server that speaks exactly docs/ipc.md's exchanges for ``daemon.hello``,
``daemon.status`` (with ``voice``), ``events.subscribe``, ``voice.join``, ``voice.leave`` and
``voice.mute``, answers what the test scripted, records every request, and sends the events the
test emits. It exists because the daemon on this branch has no voice manager yet; it makes up no
method, event or member the contract does not name."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

BOOT_ID = "5c2f0a9e1b7d4c3a"


class ScriptedVoiceDaemon:
    """``replies[method]`` is the ``result`` (a dict) or ``{"error": {...}}`` of that method;
    ``voice`` is ``daemon.status``'s ``voice``; ``requests`` the ``(method, params)`` received."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.voice: Optional[dict[str, Any]] = None
        self.replies: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.seq = 40
        self._subscribers: list[asyncio.StreamWriter] = []
        self._server: Optional[asyncio.base_events.Server] = None

    async def start(self) -> "ScriptedVoiceDaemon":
        self._server = await asyncio.start_unix_server(self._serve, self.path)
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in self._subscribers:
                writer.close()
            await self._server.wait_closed()

    def status(self) -> dict[str, Any]:
        return {"bootId": BOOT_ID, "connection": {"state": "idle"}, "room": None,
                "session": {"loggedIn": False}, "overlays": [], "voice": self.voice}

    async def emit(self, kind: str, data: dict[str, Any]) -> None:
        """An event to every subscriber, as the daemon sends it."""
        self.seq += 1
        line = _line({"jsonrpc": "2.0", "method": "event", "params": {
            "bootId": BOOT_ID, "seq": self.seq, "type": kind, "time": "2026-12-01T23:00:00Z", "data": data}})
        for writer in self._subscribers:
            writer.write(line)
            await writer.drain()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                message = json.loads(line)
                method, params = message.get("method"), message.get("params") or {}
                self.requests.append((method, params))
                reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message.get("id")}
                if method == "daemon.hello":
                    reply["result"] = {"daemon": "interactived", "version": "scripted", "protocol": 1,
                                       "bootId": BOOT_ID, "role": "control", "capabilities": []}
                elif method == "daemon.status":
                    reply["result"] = self.status()
                elif method == "events.subscribe":
                    self._subscribers.append(writer)
                    reply["result"] = {"bootId": BOOT_ID, "seq": self.seq, "snapshot": self.status()}
                elif method in self.replies:
                    scripted = self.replies[method]
                    reply.update(scripted if set(scripted) == {"error"} else {"result": scripted})
                else:
                    reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
                if "id" in message:
                    writer.write(_line(reply))
                    await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            if writer in self._subscribers:
                self._subscribers.remove(writer)
            writer.close()


def daemon_error(name: str, message: str, **data: Any) -> dict[str, Any]:
    """A reply's ``error`` for one of the daemon's own errors (code -32000, ``data.name``)."""
    return {"error": {"code": -32000, "message": message, "data": {"name": name, **data}}}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"
