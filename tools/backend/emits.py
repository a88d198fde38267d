"""Server → client emits: the emit spec shared by the admin API and the scenario file.

An emit spec is either raw, ``{"event", "payload"}``, emitted exactly as given, or built from an
overlay: ``{"event", "overlay", "shape": "wrapped"|"flat", "trackingId", "emitTimestamp"}``.
Wrapped is ``{"data": overlay, "_trackingId", "_emitTimestamp"}``; flat is the overlay with
``_trackingId``/``_emitTimestamp`` inside. Without a ``trackingId`` the overlay goes untracked
(no ``_trackingId``; ``_emitTimestamp`` only if given). ``trackingId: "auto"`` makes a fresh id.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import socketio

from .state import BackendState, now_ms

log = logging.getLogger("backend.emits")

OVERLAY_EVENTS = ("overlay", "ex-overlay")
SHAPES = ("wrapped", "flat")


@dataclass(frozen=True)
class EmitSpec:
    """A validated emit: the event and either a raw payload or an overlay to wrap."""

    event: str
    payload: Any = None
    overlay: Mapping[str, Any] | None = None
    shape: str = "wrapped"
    tracking_id: str | None = None
    emit_timestamp: int | None = None

    @classmethod
    def from_json(cls, spec: Mapping[str, Any], extra_keys: tuple[str, ...] = ()) -> EmitSpec:
        """Check a spec; ``extra_keys`` are the caller's own keys (e.g. ``room``, ``at``).

        Any event name is accepted, so tests can check that the daemon ignores unknown ones."""
        allowed = {"event", "payload", "overlay", "shape", "trackingId", "emitTimestamp"}
        unknown = set(spec) - allowed - set(extra_keys)
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)}")
        event = spec.get("event")
        if not isinstance(event, str) or not event:
            raise ValueError("event must be a non-empty string")
        has_payload, has_overlay = "payload" in spec, "overlay" in spec
        if has_payload == has_overlay:
            raise ValueError("give exactly one of payload and overlay")
        if has_payload:
            if {"shape", "trackingId", "emitTimestamp"} & set(spec):
                raise ValueError("shape, trackingId and emitTimestamp go with overlay, not payload")
            return cls(event=event, payload=spec["payload"])
        if event not in OVERLAY_EVENTS:
            raise ValueError(f"overlay is for the events {list(OVERLAY_EVENTS)}; use payload")
        overlay, shape = spec["overlay"], spec.get("shape", "wrapped")
        tracking_id, emit_ts = spec.get("trackingId"), spec.get("emitTimestamp")
        if not isinstance(overlay, Mapping):
            raise ValueError("overlay must be an object")
        if shape not in SHAPES:
            raise ValueError(f"shape must be one of {list(SHAPES)}")
        if tracking_id is not None and (not isinstance(tracking_id, str) or not tracking_id):
            raise ValueError('trackingId must be a non-empty string, "auto" or null')
        if emit_ts is not None and (isinstance(emit_ts, bool) or not isinstance(emit_ts, int)):
            raise ValueError("emitTimestamp must be an integer (ms since the epoch) or null")
        return cls(event, None, overlay, shape, tracking_id, emit_ts)

    def build(self) -> tuple[Any, str | None]:
        """The payload to emit now and its tracking id (a fresh one for ``"auto"``)."""
        if self.overlay is None:
            return self.payload, None
        tracking_id = self.tracking_id
        if tracking_id == "auto":
            tracking_id = f"trk-{uuid.uuid4().hex[:16]}"
        emit_ts = self.emit_timestamp
        if emit_ts is None and tracking_id is not None:
            emit_ts = now_ms()
        meta: dict[str, Any] = {}
        if tracking_id is not None:
            meta["_trackingId"] = tracking_id
        if emit_ts is not None:
            meta["_emitTimestamp"] = emit_ts
        if self.shape == "wrapped":
            return {"data": dict(self.overlay), **meta}, tracking_id
        return {**self.overlay, **meta}, tracking_id


class Emitter:
    """Emits to rooms, one socket or everyone, and records each emit."""

    def __init__(self, sio: socketio.AsyncServer, state: BackendState) -> None:
        self._sio = sio
        self._state = state

    def recipients(self, room: str | None, sid: str | None) -> list[str]:
        """The sids an emit would reach: ``sid`` if connected, else the room, else everyone."""
        if sid is not None:
            return [sid] if sid in self._state.sockets else []
        if room is not None:
            return self._state.rooms.members(room)
        return sorted(self._state.sockets)

    async def emit(
        self, spec: EmitSpec, room: str | None, sid: str | None, source: str
    ) -> dict[str, Any]:
        """Emit ``spec`` and return its record (``GET /_admin/emits``)."""
        payload, tracking_id = spec.build()
        sids = self.recipients(room, sid)
        target = sid if sid is not None else room
        await self._sio.emit(spec.event, payload, to=target)
        log.info("emit %s to %s (%d sockets) from %s",
                 spec.event, target or "all", len(sids), source)
        return self._state.log("emits").append(
            {
                "event": spec.event,
                "room": room,
                "sid": sid,
                "trackingId": tracking_id,
                "payload": payload,
                "recipients": len(sids),
                "sids": sids,
                "source": source,
            }
        )
