"""The scenario file and the timed emits of live rooms.

File format (JSON)::

    {"rooms": {"<mediaId>": [<timed emit>, ...]
                          | {"events": [<timed emit>, ...], "loopAfter": <seconds>}},
     "vod":   {"<mediaId>": <VOD scenario served verbatim, normally {"timelines": [...]}>},
     "users": {"<token>": {"userId", "displayName", "vip", "bet"}}}

A timed emit is an emit spec (see emits.py) plus ``"at"``: seconds after the room's timeline
started. A room's timeline starts when its first socket joins and stops when the room empties;
the next join starts it again from 0. With ``loopAfter`` it also starts over every
``loopAfter`` seconds while the room is occupied. Strings may hold ``{base}`` (the server's own
base URL, e.g. ``http://127.0.0.1:8080``) and, in room events, ``{cycle}`` (0 for a room's
first run, then 1, 2, ... for every later start, so timeline ids can differ between runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .emits import EmitSpec, Emitter
from .state import User, parse_users

log = logging.getLogger("backend.scenario")


def substitute(value: Any, replacements: Mapping[str, str]) -> Any:
    """``value`` with every placeholder replaced in every string it holds."""
    if isinstance(value, str):
        for placeholder, text in replacements.items():
            value = value.replace(placeholder, text)
        return value
    if isinstance(value, list):
        return [substitute(item, replacements) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, replacements) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class TimedEmit:
    """One emit of a room timeline: when, and the raw spec (placeholders not yet replaced)."""

    at: float
    spec: Mapping[str, Any]


@dataclass(frozen=True)
class RoomTimeline:
    """The timed emits of one live room."""

    events: tuple[TimedEmit, ...]
    loop_after: float | None = None


@dataclass(frozen=True)
class Scenario:
    """A parsed scenario file."""

    rooms: Mapping[str, RoomTimeline]
    vod: Mapping[str, Any]
    users: Mapping[str, User]


def _parse_room(room: str, value: Any) -> RoomTimeline:
    loop_after = None
    if isinstance(value, Mapping):
        unknown = set(value) - {"events", "loopAfter"}
        if unknown:
            raise ValueError(f"rooms.{room}: unknown keys {sorted(unknown)}")
        loop_after = value.get("loopAfter")
        value = value.get("events")
    if not isinstance(value, list):
        raise ValueError(f"rooms.{room}: expected a list of timed emits or {{events, loopAfter}}")
    events = []
    for index, entry in enumerate(value):
        where = f"rooms.{room}[{index}]"
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where}: expected an object")
        at = entry.get("at")
        if isinstance(at, bool) or not isinstance(at, (int, float)) or at < 0:
            raise ValueError(f"{where}: at must be a number of seconds >= 0")
        try:
            EmitSpec.from_json(entry, extra_keys=("at",))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        spec = {key: item for key, item in entry.items() if key != "at"}
        events.append(TimedEmit(float(at), spec))
    events.sort(key=lambda event: event.at)
    if loop_after is not None:
        last = events[-1].at if events else 0.0
        if isinstance(loop_after, bool) or not isinstance(loop_after, (int, float)) or (
            loop_after <= 0 or loop_after < last
        ):
            raise ValueError(f"rooms.{room}: loopAfter must be > 0 and >= the last at ({last})")
        loop_after = float(loop_after)
    return RoomTimeline(tuple(events), loop_after)


def parse_scenario(data: Any) -> Scenario:
    """Validate a scenario document; ValueError says where it is wrong."""
    if not isinstance(data, Mapping):
        raise ValueError("the scenario must be a JSON object")
    unknown = set(data) - {"rooms", "vod", "users"}
    if unknown:
        raise ValueError(f"unknown top-level keys {sorted(unknown)}")
    rooms_value, vod = data.get("rooms", {}), data.get("vod", {})
    if not isinstance(rooms_value, Mapping) or not isinstance(vod, Mapping):
        raise ValueError("rooms and vod must be objects keyed by mediaId")
    for media_id, body in vod.items():
        if not (isinstance(body, Mapping) and isinstance(body.get("timelines"), list)):
            log.warning("vod.%s is not {\"timelines\": [...]}; it is served as it is", media_id)
    rooms = {room: _parse_room(room, value) for room, value in rooms_value.items()}
    return Scenario(rooms=rooms, vod=dict(vod), users=parse_users(data.get("users", {})))


def load_scenario(path: Path) -> Scenario:
    """Read and validate a scenario file; ValueError names the file and the problem."""
    try:
        return parse_scenario(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        raise ValueError(f"scenario {path}: {exc}") from None


class RoomTimelines:
    """Runs each scenario room's timeline while that room has members."""

    def __init__(
        self,
        timelines: Mapping[str, RoomTimeline],
        emitter: Emitter,
        base_url: Callable[[], str],
    ) -> None:
        """``base_url`` gives the server's base URL (known once it listens)."""
        self._timelines = dict(timelines)
        self._emitter = emitter
        self._base_url = base_url
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._runs: dict[str, int] = {}

    def room_occupied(self, room: str) -> None:
        """The first socket joined ``room``: start its timeline if it has one."""
        timeline = self._timelines.get(room)
        if timeline is not None and room not in self._tasks:
            self._tasks[room] = asyncio.create_task(self._run(room, timeline))

    def room_emptied(self, room: str) -> None:
        """The last socket left ``room``: stop its timeline."""
        task = self._tasks.pop(room, None)
        if task is not None:
            task.cancel()
            log.info("room %s emptied: its timeline stopped", room)

    def to_json(self) -> dict[str, Any]:
        """``{room: {"running", "runs", "events", "loopAfter"}}`` for the admin state."""
        return {
            room: {
                "running": room in self._tasks,
                "runs": self._runs.get(room, 0),
                "events": len(timeline.events),
                "loopAfter": timeline.loop_after,
            }
            for room, timeline in self._timelines.items()
        }

    async def stop(self) -> None:
        """Cancel every running timeline (server shutdown)."""
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self, room: str, timeline: RoomTimeline) -> None:
        loop = asyncio.get_running_loop()
        while True:
            cycle = self._runs.get(room, 0)
            self._runs[room] = cycle + 1
            started = loop.time()
            log.info("room %s: timeline run %d started", room, cycle)
            replacements = {"{base}": self._base_url(), "{cycle}": str(cycle)}
            for event in timeline.events:
                await asyncio.sleep(max(0.0, started + event.at - loop.time()))
                try:
                    spec = EmitSpec.from_json(substitute(event.spec, replacements))
                    await self._emitter.emit(spec, room=room, sid=None, source="scenario")
                except Exception:  # one bad emit must not end the demo
                    log.exception("room %s: emit at %.1f s failed", room, event.at)
            if timeline.loop_after is None:
                break
            await asyncio.sleep(max(0.0, started + timeline.loop_after - loop.time()))
        if self._tasks.get(room) is asyncio.current_task():
            del self._tasks[room]
