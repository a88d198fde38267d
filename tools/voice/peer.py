"""An aiortc participant of an AudioBridge room: joins with a display name, sends a track (a
tone, tone and silence, a WAV file), records what Janus' mix brings it, and keeps the room's
events (participants, talking). aiortc writes the RFC 6464 audio-level extension itself, so
Janus raises ``talking`` for these peers."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, Optional

import websockets
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

from .audio import PacedAudioTrack, Recording, record
from .client import JanusClient, JanusRequestError, plugin_data


def room_id(room: str) -> Any:
    """A room as Janus takes it: a number when all digits (Janus' default numeric ids)."""
    return int(room) if room.isdigit() else room


class RoomEvents:
    """Every plugin event of one handle, in order, with waits for one that matches."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        #: When each item arrived (time.monotonic()).
        self.times: list[float] = []
        self._changed = asyncio.Event()

    def add(self, event: dict[str, Any]) -> None:
        self.items.append(event)
        self.times.append(time.monotonic())
        self._changed.set()

    def first_time(self, predicate: Callable[[dict[str, Any]], bool]) -> Optional[float]:
        """When the first item with ``predicate`` arrived, or None."""
        return next((moment for item, moment in zip(self.items, self.times) if predicate(item)), None)

    async def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float, start: int = 0) -> dict[str, Any]:
        """The first event from index ``start`` on with ``predicate``; TimeoutError after ``timeout`` s."""
        return (await self.wait_index(predicate, timeout, start))[1]

    async def wait_index(self, predicate: Callable[[dict[str, Any]], bool], timeout: float,
                         start: int = 0) -> tuple[int, dict[str, Any]]:
        """Like ``wait_for``, with the event's index."""
        async def wait() -> tuple[int, dict[str, Any]]:
            index = start
            while True:
                while index < len(self.items):
                    if predicate(self.items[index]):
                        return index, self.items[index]
                    index += 1
                self._changed.clear()
                await self._changed.wait()
        return await asyncio.wait_for(wait(), timeout)


async def leave_and_close(client: JanusClient, handle: Optional[int]) -> None:
    """Leaves the room on ``handle``, destroys the session and closes the WebSocket; a server
    that is already gone (or refuses the leave) is not an error here."""
    try:
        if handle is not None:
            await client.send_async(handle, {"request": "leave"})
        await client.destroy()
    except (JanusRequestError, ConnectionError, asyncio.TimeoutError, websockets.WebSocketException):
        pass
    await client.close()


async def ensure_room(client: JanusClient, handle: int, room: str, **settings: Any) -> None:
    """Creates ``room`` (with ``audiolevel_event`` and ``settings``) unless it exists."""
    exists = await client.message(handle, {"request": "exists", "room": room_id(room)})
    if not exists.get("exists"):
        await client.message(handle, {"request": "create", "room": room_id(room), "permanent": False,
                                      "audiolevel_event": True, **settings})


class AudioBridgePeer:
    """``peer = AudioBridgePeer(url, room, "Ana", ToneTrack(500)); await peer.join()``."""

    def __init__(self, url: str, room: str, display: str, track: PacedAudioTrack, api_secret: Optional[str] = None,
                 token: Optional[str] = None, pin: Optional[str] = None) -> None:
        self.url = url
        self.room = room
        self.display = display
        self.track = track
        self.api_secret = api_secret
        self.token = token
        self.pin = pin
        self.client: Optional[JanusClient] = None
        self.handle: Optional[int] = None
        self.id: Optional[int] = None
        self.participants_at_join: list[dict[str, Any]] = []
        self.events = RoomEvents()
        self.recording = Recording()
        self.connection: Optional[RTCPeerConnection] = None
        self._tasks: list[asyncio.Task] = []

    async def join(self, timeout: float = 15.0, create_room: Optional[dict[str, Any]] = None) -> None:
        self.client = await JanusClient.connect(self.url, self.api_secret, self.token)
        await self.client.create()
        self.handle = await self.client.attach()
        self._tasks.append(asyncio.create_task(self._dispatch(self.client.events(self.handle))))
        if create_room is not None:
            await ensure_room(self.client, self.handle, self.room, **create_room)
        body: dict[str, Any] = {"request": "join", "room": room_id(self.room), "display": self.display, "muted": False}
        if self.pin:
            body["pin"] = self.pin
        await self.client.send_async(self.handle, body)
        joined = plugin_data(await self.events.wait_for(lambda e: plugin_data(e).get("audiobridge") in ("joined", "event") and
                                                        ("id" in plugin_data(e) or "error_code" in plugin_data(e)), timeout))
        if "error_code" in joined:
            raise RuntimeError(f"join refused: {joined}")
        self.id = joined["id"]
        self.participants_at_join = joined.get("participants", [])

        # No STUN server: aiortc would otherwise ask a public one.
        self.connection = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.connection.addTrack(self.track)

        @self.connection.on("track")
        def on_track(track) -> None:
            if track.kind == "audio":
                self._tasks.append(asyncio.create_task(record(track, self.recording)))

        await self.connection.setLocalDescription(await self.connection.createOffer())
        start = len(self.events.items)
        await self.client.send_async(self.handle, {"request": "configure", "muted": False},
                                     jsep={"type": "offer", "sdp": self.connection.localDescription.sdp})
        answer = await self.events.wait_for(lambda e: "jsep" in e, timeout, start)
        await self.connection.setRemoteDescription(RTCSessionDescription(sdp=answer["jsep"]["sdp"], type="answer"))

    async def _dispatch(self, queue: asyncio.Queue) -> None:
        while True:
            self.events.add(await queue.get())

    def talking_events(self, participant: int) -> list[str]:
        """The ``talking``/``stopped-talking`` events Janus sent about ``participant``, in order."""
        return [plugin_data(e)["audiobridge"] for e in self.events.items
                if plugin_data(e).get("audiobridge") in ("talking", "stopped-talking") and plugin_data(e).get("id") == participant]

    async def leave(self) -> None:
        """Leaves the room and closes everything (idempotent)."""
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        if self.connection is not None:
            await self.connection.close()
            self.connection = None
        if self.client is not None:
            await leave_and_close(self.client, self.handle)
            self.client = None
