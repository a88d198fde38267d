"""A test-only stand-in for a daemon with a voice manager, for the players' voice scenarios: the
player connects to this relay instead of the daemon. Every line goes to the real daemon and
back unchanged, except that

- ``voice.mute`` is answered here as docs/ipc.md says (``{room, muted}``; ``interactive.NoRoom``
  outside a room) and recorded in ``mutes``;
- ``daemon.status`` and the ``events.subscribe`` snapshot carry the scripted ``voice``;
- the test's ``voice.state``, ``voice.peer`` and ``voice.talking`` events are put into the
  player's subscription (with the daemon's ``bootId``; seqs renumbered so that they still rise by
  one per event).

It lets the panel's scenarios script any voice event without a voice server (the real voice
manager against Janus is scenario_voice_room.py's); it makes up no method, event or member the
contract does not name."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any, Optional

WAIT = 20.0


class _Connection:
    """One player connection: its upstream to the daemon and its subscription's numbering."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.patch: dict[Any, str] = {}  # request id -> "status" or "subscribe"
        self.subscribed = False
        self.boot_id = ""
        self.offset = 0  # events put in so far: the daemon's seq + offset is the player's
        self.last_seq = 0


class ScriptedVoiceRelay:
    """Serves ``socket_path``; ``join``, ``peer``, ``talking`` and ``leave`` script the room."""

    def __init__(self, daemon_socket: str) -> None:
        self.daemon_socket = daemon_socket
        self._folder = Path(tempfile.mkdtemp(prefix="voice-relay-", dir="/tmp"))
        self.socket_path = str(self._folder / "relay.sock")
        self.voice: Optional[dict[str, Any]] = None
        self.mutes: list[dict[str, Any]] = []
        self._connections: list[_Connection] = []
        self._subscribed = asyncio.Event()
        self._server: Optional[asyncio.base_events.Server] = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> "ScriptedVoiceRelay":
        self._server = await asyncio.start_unix_server(self._serve, self.socket_path, limit=16 << 20)
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for connection in self._connections:
            connection.writer.close()
        if self._server is not None:
            await self._server.wait_closed()
        for path in self._folder.iterdir():
            path.unlink()
        self._folder.rmdir()

    async def wait_subscribed(self) -> None:
        """Returns once a player subscribed to the voice events (bounded)."""
        await asyncio.wait_for(self._subscribed.wait(), WAIT)

    # The room, as the daemon's voice manager would tell it.

    async def join(self, room: str, self_id: str, participants: list[dict[str, Any]], muted: bool = False) -> None:
        """The box is in ``room`` with ``participants`` (``{peerId, display, muted}``, this box's
        first): ``voice.state`` ``joined`` with their number; the list is in ``daemon.status``."""
        self.voice = {"room": room, "state": "joined", "selfId": self_id, "muted": muted, "error": None,
                      "participants": [{"talking": False, **p} for p in participants]}
        await self._state("joined")

    async def peer(self, peer_id: str, display: str, event: str, muted: bool = False,
                   reason: Optional[str] = None) -> None:
        """``voice.peer``: another participant ``joined``, ``left`` or ``updated``."""
        assert self.voice is not None
        people = [p for p in self.voice["participants"] if p["peerId"] != peer_id]
        if event != "left":
            people.append({"peerId": peer_id, "display": display, "muted": muted, "talking": False})
        self.voice["participants"] = people
        data = {"room": self.voice["room"], "peerId": peer_id, "display": display, "event": event, "muted": muted}
        if reason is not None:
            data["reason"] = reason
        await self.emit("voice.peer", data)

    async def talking(self, peer_id: str, talking: bool) -> None:
        """``voice.talking`` (this box's ``selfId`` too)."""
        assert self.voice is not None
        for participant in self.voice["participants"]:
            if participant["peerId"] == peer_id:
                participant["talking"] = talking
        await self.emit("voice.talking", {"room": self.voice["room"], "peerId": peer_id, "talking": talking})

    async def leave(self) -> None:
        """``voice.state`` ``left`` (reason ``left``)."""
        assert self.voice is not None
        self.voice.update(state="left", participants=[])
        await self._state("left", reason="left")

    async def _state(self, state: str, reason: Optional[str] = None) -> None:
        assert self.voice is not None
        await self.emit("voice.state", {"room": self.voice["room"], "state": state, "selfId": self.voice["selfId"],
                                        "muted": self.voice["muted"], "participants": len(self.voice["participants"]),
                                        "error": None, "reason": reason})

    async def emit(self, kind: str, data: dict[str, Any]) -> None:
        """An event into every subscription, numbered after the last one it had."""
        for connection in self._connections:
            if not connection.subscribed:
                continue
            connection.offset += 1
            connection.last_seq += 1
            await self._write(connection.writer, {"jsonrpc": "2.0", "method": "event", "params": {
                "bootId": connection.boot_id, "seq": connection.last_seq, "type": kind,
                "time": "2026-12-01T23:00:00.000Z", "data": data}})

    # The relay.

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_unix_connection(self.daemon_socket, limit=16 << 20)
        connection = _Connection(writer)
        self._connections.append(connection)
        back = asyncio.get_running_loop().create_task(self._from_daemon(connection, upstream_reader))
        self._tasks.add(back)
        try:
            while line := await reader.readline():
                message = json.loads(line)
                method = message.get("method")
                if method == "voice.mute":
                    await self._write(writer, self._mute(message))
                    continue
                if method == "daemon.status":
                    connection.patch[message.get("id")] = "status"
                elif method == "events.subscribe":
                    connection.patch[message.get("id")] = "subscribe"
                upstream_writer.write(line)
                await upstream_writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            back.cancel()
            self._tasks.discard(back)
            self._connections.remove(connection)
            upstream_writer.close()
            writer.close()

    async def _from_daemon(self, connection: _Connection, upstream: asyncio.StreamReader) -> None:
        try:
            while line := await upstream.readline():
                message = json.loads(line)
                params = message.get("params")
                if message.get("method") == "event" and isinstance(params, dict) and isinstance(params.get("seq"), int):
                    params["seq"] += connection.offset
                    connection.last_seq = params["seq"]
                elif message.get("id") in connection.patch and isinstance(message.get("result"), dict):
                    self._patch(connection, connection.patch.pop(message["id"]), message["result"])
                await self._write(connection.writer, message)
        except (ConnectionError, OSError):
            pass
        finally:
            connection.writer.close()

    def _patch(self, connection: _Connection, what: str, result: dict[str, Any]) -> None:
        if what == "status":
            result["voice"] = self.voice
            return
        result["snapshot"]["voice"] = self.voice
        result["seq"] += connection.offset
        connection.boot_id = result["bootId"]
        connection.last_seq = result["seq"]
        connection.subscribed = True
        self._subscribed.set()

    def _mute(self, message: dict[str, Any]) -> dict[str, Any]:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message.get("id")}
        muted = (message.get("params") or {}).get("muted")
        if not isinstance(muted, bool):
            reply["error"] = {"code": -32602, "message": "'muted' is required"}
        elif self.voice is None or self.voice["state"] != "joined":
            reply["error"] = {"code": -32000, "message": "not in a voice room", "data": {"name": "interactive.NoRoom"}}
        else:
            self.mutes.append({"muted": muted})
            self.voice["muted"] = muted
            for participant in self.voice["participants"]:
                if participant["peerId"] == self.voice["selfId"]:
                    participant["muted"] = muted
            reply["result"] = {"room": self.voice["room"], "muted": muted}
        return reply

    @staticmethod
    async def _write(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        await writer.drain()
