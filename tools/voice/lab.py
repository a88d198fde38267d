"""The lab a test or the demo drives over its standard input and output
(``python3 -m tools.voice lab``, README.md): friends in a room on Janus, a cuttable proxy in
front of Janus' WebSocket for the daemon, and the checks only this side can make (what a friend
hears, what the box's sink wrote, the server's participant list, the packets Janus received).

Output, one JSON object a line: the ready line first; then ``{"friend", "event"}`` for every
room event a friend sees, and ``{"reply": ID, "result": ...}`` or ``{"reply": ID, "error":
TEXT}`` for every command. Commands, one JSON object a line, each with an ``id`` and a ``do``:

- ``participants``: the server's list of the room (``listparticipants``).
- ``hear`` ``friend``, ``tones``, ``seconds``: each tone's level (dB, ``audio.tone_level``) in
  the next ``seconds`` of what the friend hears.
- ``hearFile`` ``path``, ``tones``, ``seconds``: the same over the next ``seconds`` written to
  a raw S16LE mono 48 kHz file (the box's sink, ``scenario.raw_sink``).
- ``join`` ``friend`` (``NAME:HZ``, ``NAME:HZ:ON/OFF`` or ``NAME:FILE.wav``): one more friend;
  the result is ``{display, id}``. ``leave`` ``friend``: that friend leaves.
- ``cut``: every connection through the proxy is reset and new ones refused; ``restore``.
- ``wav`` ``path``, ``hz``, ``on``, ``off``, ``cycles``: writes a tone that alternates with
  silence (``audio.write_alternating_wav``), for the box's source.
- ``packets`` ``display``: the RTP audio packets Janus received from that participant (null
  when it has none).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, Callable, Optional

from .audio import RATE, ToneTrack, WavTrack, read_raw, tone_level, write_alternating_wav
from .client import JanusClient
from .janus import JanusServer
from .netns import VoiceNetwork
from .peer import AudioBridgePeer, room_id
from .proxy import CuttableProxy
from .scenario import ROOM_SETTINGS, until

PROXY_PORT = 8189


def friend_track(spec: str) -> tuple[str, Any]:
    """``NAME:HZ`` (a tone), ``NAME:HZ:ON/OFF`` (tone ON s, silence OFF s), ``NAME:FILE.wav``."""
    name, _, rest = spec.partition(":")
    if rest.endswith(".wav"):
        return name, WavTrack(rest)
    frequency, _, pattern = rest.partition(":")
    # Two or three friends' tones add up below full scale in Janus' mix.
    if pattern:
        on, _, off = pattern.partition("/")
        return name, ToneTrack(float(frequency), amplitude=0.3, on=float(on), off=float(off))
    return name, ToneTrack(float(frequency), amplitude=0.3)


def file_seconds(path: str) -> float:
    target = Path(path)
    return target.stat().st_size / 2 / RATE if target.exists() else 0.0


class Lab:
    """Runs on a thread in the box namespace (``net.start_in_box(lab.run)``); ``post(line)``
    hands it a command line from another thread, ``post(None)`` ends it."""

    def __init__(self, net: VoiceNetwork, janus: JanusServer, room: str, specs: list[str], pin: Optional[str],
                 emit: Callable[[dict[str, Any]], None]) -> None:
        self.net = net
        self.janus = janus
        # The friends and the observer send Janus' api_secret when the server has one.
        self.api_secret = janus.api_secret
        self.room = room
        self.specs = specs
        self.pin = pin
        self.emit = emit
        self.settings = dict(ROOM_SETTINGS, pin=pin) if pin else ROOM_SETTINGS
        self.friends: dict[str, AudioBridgePeer] = {}
        self.proxy = CuttableProxy(net.box_address, PROXY_PORT, net.server_address, 8188)
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._commands: Optional[asyncio.Queue] = None
        self._observer: Optional[JanusClient] = None
        self._observer_handle: Optional[int] = None
        self._seen: dict[str, int] = {}

    def post(self, line: Optional[str]) -> None:
        if self._loop is not None and self._commands is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._commands.put_nowait, line)

    async def run(self, ready: dict[str, Any]) -> None:
        self._loop = asyncio.get_running_loop()
        self._commands = asyncio.Queue()
        tasks: set[asyncio.Task] = set()
        try:
            await self.proxy.start()
            self._observer = await JanusClient.connect(self.janus.url, api_secret=self.api_secret)
            await self._observer.create()
            self._observer_handle = await self._observer.attach()
            for spec in self.specs:
                await self._join(spec)
            self.emit(dict(ready, proxy=self.proxy.url,
                           friends=[{"display": friend.display, "id": friend.id} for friend in self.friends.values()]))
            forwarding = asyncio.create_task(self._forward_events())
            tasks.add(forwarding)
            while (line := await self._commands.get()) is not None:
                task = asyncio.create_task(self._execute(line))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.gather(*(friend.leave() for friend in self.friends.values()), return_exceptions=True)
            if self._observer is not None:
                await self._observer.close()
            await self.proxy.stop()

    async def _forward_events(self) -> None:
        while True:
            for name, friend in list(self.friends.items()):
                start = self._seen.get(name, 0)
                for event in friend.events.items[start:]:
                    data = event.get("plugindata", {}).get("data")
                    if data:
                        self.emit({"friend": name, "event": data})
                self._seen[name] = len(friend.events.items)
            await asyncio.sleep(0.05)

    async def _execute(self, line: str) -> None:
        identifier: Any = None
        try:
            command = json.loads(line)
            identifier = command.get("id")
            handler = {"participants": self._participants, "hear": self._hear, "hearFile": self._hear_file, "join": self._join_command,
                       "leave": self._leave, "cut": self._cut, "restore": self._restore, "accepted": self._accepted,
                       "wav": self._wav,
                       "packets": self._packets}.get(command.get("do"))
            if handler is None:
                raise ValueError(f"unknown command {command.get('do')!r}")
            self.emit({"reply": identifier, "result": await handler(command)})
        except Exception as error:  # every failure is the command's answer
            self.emit({"reply": identifier, "error": f"{type(error).__name__}: {error}"})

    async def _join(self, spec: str) -> AudioBridgePeer:
        name, track = friend_track(spec)
        friend = AudioBridgePeer(self.janus.url, self.room, name, track, api_secret=self.api_secret, pin=self.pin)
        await friend.join(create_room=self.settings)
        self.friends[name] = friend
        return friend

    async def _join_command(self, command: dict[str, Any]) -> dict[str, Any]:
        friend = await self._join(command["friend"])
        return {"display": friend.display, "id": friend.id}

    async def _leave(self, command: dict[str, Any]) -> None:
        friend = self.friends.pop(command["friend"])
        await friend.leave()

    async def _participants(self, command: dict[str, Any]) -> list[dict[str, Any]]:
        assert self._observer is not None and self._observer_handle is not None
        data = await self._observer.message(self._observer_handle, {"request": "listparticipants", "room": room_id(self.room)})
        return data.get("participants", [])

    async def _hear(self, command: dict[str, Any]) -> dict[str, float]:
        friend = self.friends[command["friend"]]
        seconds = float(command.get("seconds", 1.5))
        mark = time.monotonic()
        await until(lambda: len(friend.recording.since(mark)) >= seconds * RATE, 15, what=f"{seconds} s of audio at {friend.display}")
        return self._levels(friend.recording.since(mark)[:int(seconds * RATE)], command["tones"])

    async def _hear_file(self, command: dict[str, Any]) -> dict[str, float]:
        path, seconds = command["path"], float(command.get("seconds", 1.5))
        window = {"start": file_seconds(path)}

        def written() -> bool:
            now = file_seconds(path)
            if now < window["start"]:  # a new media process truncated the file
                window["start"] = 0.0
            return now >= window["start"] + seconds

        await until(written, 15, what=f"{seconds} s more audio in {path}")
        samples = read_raw(path)[int(window["start"] * RATE):int((window["start"] + seconds) * RATE)]
        return self._levels(samples, command["tones"])

    @staticmethod
    def _levels(samples: Any, tones: list[float]) -> dict[str, float]:
        # Keys as %g writes them ("500", "1100"); -inf (silence) as -200, which JSON can carry.
        return {f"{float(tone):g}": max(round(tone_level(samples, float(tone)), 1), -200.0) for tone in tones}

    async def _cut(self, command: dict[str, Any]) -> int:
        self.proxy.cut()
        return self.proxy.accepted

    async def _restore(self, command: dict[str, Any]) -> int:
        self.proxy.restore()
        return self.proxy.accepted

    async def _accepted(self, command: dict[str, Any]) -> int:
        """How many connections the proxy took so far (those it refused while cut included)."""
        return self.proxy.accepted

    async def _wav(self, command: dict[str, Any]) -> str:
        write_alternating_wav(command["path"], float(command["hz"]), float(command["on"]), float(command["off"]), int(command["cycles"]))
        return command["path"]

    async def _packets(self, command: dict[str, Any]) -> Optional[int]:
        return await self.janus.audio_packets_from(command["display"])
