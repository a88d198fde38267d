"""Runs the media process ``interactived-voice`` the way the daemon's voice manager will: one
end of a socket pair as its control socket, a Janus session and AudioBridge handle of its own,
the offer sent with ``configure``, the answer handed back, candidates relayed both ways."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from pathlib import Path
from typing import Any, Optional

from .client import JanusClient, plugin_data
from .peer import RoomEvents, ensure_room, leave_and_close, room_id

REPO_ROOT = Path(__file__).resolve().parents[2]


def media_binary() -> Path:
    """The built media process: $INTERACTIVED_VOICE, else .build/debug/interactived-voice."""
    configured = os.environ.get("INTERACTIVED_VOICE")
    return Path(configured) if configured else REPO_ROOT / ".build" / "debug" / "interactived-voice"


class MediaProcess:
    """The media process and its control socket: ``send`` messages, ``messages`` (every one
    received, in order) and waits on them."""

    def __init__(self, process: asyncio.subprocess.Process, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.process = process
        self.reader = reader
        self.writer = writer
        self.messages = RoomEvents()
        self.closed = asyncio.Event()
        self._reader_task = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, binary: Optional[Path] = None, env: Optional[dict[str, str]] = None) -> "MediaProcess":
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            process = await asyncio.create_subprocess_exec(
                str(binary or media_binary()), "--control-fd", str(child.fileno()), pass_fds=[child.fileno()],
                stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=env)
        finally:
            child.close()
        reader, writer = await asyncio.open_unix_connection(sock=parent, limit=1 << 20)
        media = cls(process, reader, writer)
        media._stderr_task = asyncio.create_task(media._collect_stderr())
        return media

    async def _collect_stderr(self) -> None:
        self.stderr_lines: list[str] = []
        assert self.process.stderr is not None
        async for line in self.process.stderr:
            self.stderr_lines.append(line.decode(errors="replace").rstrip("\n"))

    def stderr(self) -> str:
        return "\n".join(getattr(self, "stderr_lines", []))

    async def _read(self) -> None:
        try:
            while line := await self.reader.readline():
                self.messages.add(json.loads(line))
        finally:
            self.closed.set()

    async def send(self, message: dict[str, Any]) -> None:
        self.writer.write((json.dumps(message) + "\n").encode())
        await self.writer.drain()

    async def wait_for(self, kind: str, timeout: float, start: int = 0, **fields: Any) -> dict[str, Any]:
        return await self.messages.wait_for(
            lambda m: m.get("type") == kind and all(m.get(k) == v for k, v in fields.items()), timeout, start)

    async def wait_exit(self, timeout: float) -> int:
        return await asyncio.wait_for(self.process.wait(), timeout)

    def close_control(self) -> None:
        self.writer.close()

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


class BoxDriver:
    """A set-top box in the room: the media process, joined the way the daemon will join.

    ``started_at`` is when ``start`` was sent (time.monotonic())."""

    def __init__(self, url: str, room: str, display: str, source: str, sink: str, echo_cancel: bool = False,
                 muted: bool = False, api_secret: Optional[str] = None, binary: Optional[Path] = None) -> None:
        self.url = url
        self.room = room
        self.display = display
        self.start_message = {"type": "start", "source": source, "sink": sink, "echoCancel": echo_cancel, "ice": [], "muted": muted}
        self.api_secret = api_secret
        self.binary = binary
        self.media: Optional[MediaProcess] = None
        self.client: Optional[JanusClient] = None
        self.handle: Optional[int] = None
        self.id: Optional[int] = None
        self.events = RoomEvents()
        self.started_at = 0.0
        self._tasks: list[asyncio.Task] = []

    async def join(self, timeout: float = 20.0, create_room: Optional[dict[str, Any]] = None) -> None:
        self.client = await JanusClient.connect(self.url, self.api_secret)
        await self.client.create()
        self.handle = await self.client.attach()
        queue = self.client.events(self.handle)
        self._tasks.append(asyncio.create_task(self._dispatch(queue)))
        if create_room is not None:
            await ensure_room(self.client, self.handle, self.room, **create_room)
        await self.client.send_async(self.handle, {"request": "join", "room": room_id(self.room), "display": self.display,
                                                   "muted": self.start_message["muted"]})
        joined = plugin_data(await self.events.wait_for(lambda e: plugin_data(e).get("audiobridge") == "joined" and "id" in plugin_data(e), timeout))
        self.id = joined["id"]

        self.media = await MediaProcess.start(self.binary)
        self.started_at = time.monotonic()
        await self.media.send(self.start_message)
        first = await self.media.messages.wait_for(lambda m: m.get("type") in ("ready", "unavailable"), timeout)
        if first["type"] == "unavailable":
            raise RuntimeError(f"media process unavailable: {first['reason']}")
        offer = await self.media.wait_for("offer", timeout)
        start = len(self.events.items)
        await self.client.send_async(self.handle, {"request": "configure", "muted": self.start_message["muted"]},
                                     jsep={"type": "offer", "sdp": offer["sdp"]})
        answer = await self.events.wait_for(lambda e: "jsep" in e, timeout, start)
        await self.media.send({"type": "answer", "sdp": answer["jsep"]["sdp"]})
        self._tasks.append(asyncio.create_task(self._relay_local_candidates()))

    async def _dispatch(self, queue: asyncio.Queue) -> None:
        while True:
            event = await queue.get()
            if event.get("janus") == "trickle" and self.media is not None:
                candidate = event.get("candidate", {})
                if candidate.get("completed"):
                    await self.media.send({"type": "candidate", "completed": True})
                elif "candidate" in candidate:
                    await self.media.send({"type": "candidate", "mlineIndex": candidate.get("sdpMLineIndex", 0),
                                           "candidate": candidate["candidate"]})
            self.events.add(event)

    async def _relay_local_candidates(self) -> None:
        assert self.media is not None and self.client is not None and self.handle is not None
        index = 0
        while True:
            found, message = await self.media.messages.wait_index(lambda m: m.get("type") == "candidate", 3600, index)
            index = found + 1
            if message.get("completed"):
                await self.client.trickle(self.handle, None)
                return
            await self.client.trickle(self.handle, {"sdpMLineIndex": message["mlineIndex"], "candidate": message["candidate"]})

    async def mute(self, muted: bool, tell_server: bool = True) -> None:
        """Mutes the media process (its valve) and, unless ``tell_server`` is false, Janus too."""
        assert self.media is not None and self.client is not None and self.handle is not None
        await self.media.send({"type": "mute", "muted": muted})
        if tell_server:
            await self.client.send_async(self.handle, {"request": "configure", "muted": muted})

    async def leave(self, stop_timeout: float = 5.0) -> Optional[int]:
        """Stops the media process (``stop``), leaves and closes; returns its exit status."""
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        status = None
        if self.media is not None:
            if self.media.process.returncode is None:
                try:
                    await self.media.send({"type": "stop"})
                    status = await self.media.wait_exit(stop_timeout)
                except (ConnectionError, asyncio.TimeoutError):
                    await self.media.kill()
            status = self.media.process.returncode if status is None else status
        if self.client is not None:
            await leave_and_close(self.client, self.handle)
            self.client = None
        return status
