"""Helpers shared by the tests, the measurements and the demo: a room of aiortc peers and the
box, and bounded polling."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Optional

from .audio import ToneTrack
from .driver import BoxDriver
from .peer import AudioBridgePeer

# The test room's settings: 48 kHz mixing (the tones stay exact), and talking detection over
# 50 packets (1 s) at -40 dBov, so that a 3 s tone is seen talking and 3 s of silence not.
ROOM_SETTINGS: dict[str, Any] = {"sampling_rate": 48000, "audio_active_packets": 50, "audio_level_average": 40}


async def until(check: Callable[[], Any], timeout: float, interval: float = 0.1, what: str = "the condition") -> Any:
    """Polls ``check`` (a function, or one returning an awaitable) until it returns something
    true; returns it. ``TimeoutError`` naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if isinstance(result, Awaitable):
            result = await result
        if result:
            return result
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} did not happen within {timeout} s")
        await asyncio.sleep(interval)


async def join_peers(url: str, room: str, tones: list[float], names: Optional[list[str]] = None,
                     settings: Optional[dict[str, Any]] = None, amplitude: float = 0.5) -> list[AudioBridgePeer]:
    """Peers sending one tone each (at ``amplitude`` of full scale: Janus' mix saturates when
    the tones add up past 1), joined in order (the first creates the room)."""
    peers = []
    for index, frequency in enumerate(tones):
        name = names[index] if names else f"Friend {index + 1}"
        peer = AudioBridgePeer(url, room, name, ToneTrack(frequency, amplitude))
        await peer.join(create_room=ROOM_SETTINGS if settings is None else settings)
        peers.append(peer)
    return peers


async def leave_all(peers: list[AudioBridgePeer], box: Optional[BoxDriver] = None) -> Optional[int]:
    """Leaves with the box first; returns the media process's exit status."""
    status = await box.leave() if box is not None else None
    await asyncio.gather(*(peer.leave() for peer in peers), return_exceptions=True)
    return status


def raw_sink(path: str) -> str:
    """A sink fragment writing what the box hears as raw S16LE mono 48 kHz (audio.read_raw)."""
    return f"audioconvert ! audioresample ! audio/x-raw,format=S16LE,rate=48000,channels=1 ! filesink location={path}"


def tone_source(frequency: float, volume: float = 0.5) -> str:
    """A live test tone as the box's microphone."""
    return f"audiotestsrc is-live=true wave=sine freq={frequency} volume={volume}"
