"""Socket.IO side: the handshake checks and the client → server events of BACKEND.md.

Every handshake and event is recorded for the admin API. Payloads are never refused for their
shape: what is missing or odd is listed in the record's ``problems`` so tests can assert on it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

import socketio

from .scenario import RoomTimelines
from .state import (
    HANDSHAKE_HEADERS,
    BackendState,
    SocketInfo,
    bearer_token,
    handshake_record,
    now_ms,
)

log = logging.getLogger("backend.socketio")

#: emit-ack stages of seed 001.
ACK_STAGES = ("received", "rendered", "answer", "answer-succeeded", "answer-failed")


def _missing(payload: Any, keys: tuple[str, ...]) -> list[str]:
    """Problems of a payload that should be an object holding ``keys``."""
    if not isinstance(payload, Mapping):
        return ["payload is not an object"]
    return [f"missing {key}" for key in keys if key not in payload]


def _field(payload: Any, key: str) -> Any:
    return payload.get(key) if isinstance(payload, Mapping) else None


class SocketHandlers:
    """The handlers of one python-socketio AsyncServer (namespace ``/``)."""

    def __init__(
        self, sio: socketio.AsyncServer, state: BackendState, timelines: RoomTimelines
    ) -> None:
        self._sio = sio
        self._state = state
        self._timelines = timelines

    def register(self) -> None:
        """Attach every handler to the server."""
        self._sio.on("connect", self.connect)
        self._sio.on("disconnect", self.disconnect)
        self._sio.on("join-room", self.join_room)
        self._sio.on("leave-room", self.leave_room)
        self._sio.on("ckst", self.ckst)
        self._sio.on("emit-ack", self.emit_ack)
        self._sio.on("receive-message", self.receive_message)
        self._sio.on("*", self.unknown_event)

    # -- connection -------------------------------------------------------------------------

    def _refusal(
        self, tenant: str | None, os_name: str | None, authorization: str | None, auth: Any
    ) -> tuple[str | None, str | None]:
        """(why the handshake is refused or None, the viewer's userId or None if anonymous)."""
        if self._state.faults.refuseConnections == "connect_error":
            return "server refusing connections", None
        if not tenant:
            return "missing x-tenant-id header", None
        if not os_name:
            return "missing os header", None
        if auth is not None and not isinstance(auth, Mapping):
            return "invalid auth payload", None
        try:
            tokens = [bearer_token(authorization)]
        except ValueError:
            return "invalid token", None
        if auth is not None and "token" in auth:
            tokens.append(auth["token"] if isinstance(auth["token"], str) else "")
        users = [self._state.user_for_token(t) for t in tokens if t is not None]
        if None in users:
            return "invalid token", None
        user_ids = {user.userId for user in users if user is not None}
        if len(user_ids) > 1:
            return "invalid token: the header and auth tokens name different users", None
        return None, user_ids.pop() if user_ids else None

    async def connect(self, sid: str, environ: dict[str, Any], auth: Any) -> None:
        """Check ``x-tenant-id``, ``os`` and the token; refuse with CONNECT_ERROR if wrong."""
        headers = {
            name: environ.get("HTTP_" + name.upper().replace("-", "_"))
            for name in HANDSHAKE_HEADERS
        }
        tenant, os_name = headers["x-tenant-id"], headers["os"]
        query = environ.get("QUERY_STRING", "")
        transport = parse_qs(query).get("transport", ["polling"])[0]
        refusal, user_id = self._refusal(tenant, os_name, headers["authorization"], auth)
        eio_sid = self._sio.manager.eio_sid_from_sid(sid, "/")
        self._state.log("handshakes").append(
            handshake_record(
                sid=sid,
                eio_sid=eio_sid,
                refusal=refusal,
                headers=headers,
                auth=auth,
                user_id=user_id,
                query=query,
                transport=transport,
            )
        )
        if refusal is not None:
            log.info("handshake %s refused: %s", sid, refusal)
            raise socketio.exceptions.ConnectionRefusedError(refusal)
        self._state.sockets[sid] = SocketInfo(
            sid=sid,
            eioSid=eio_sid,
            userId=user_id,
            tenant=tenant or "",
            os=os_name or "",
            transport=transport,
        )
        log.info("socket %s connected (tenant %s, user %s)", sid, tenant, user_id or "anonymous")

    async def disconnect(self, sid: str, reason: str) -> None:
        """Forget the socket, empty its rooms, and note why it went in its handshake record."""
        info = self._state.sockets.pop(sid, None)
        record = self._state.log("handshakes").find(sid=sid, accepted=True)
        if record is not None:
            record["disconnectedAt"] = now_ms()
            record["disconnectReason"] = str(reason)
        if info is not None:
            for room in sorted(info.rooms):
                if self._state.rooms.leave(room, sid):
                    self._timelines.room_emptied(room)
        log.info("socket %s disconnected: %s", sid, reason)

    # -- client → server events -------------------------------------------------------------

    async def join_room(self, sid: str, *args: Any) -> Any:
        """``join-room``: enter room ``mediaId``; ack ``{"ok": true}`` unless ackJoinRoom is off."""
        payload = args[0] if args else None
        problems = _missing(payload, ("mediaId", "userId", "displayName", "os"))
        problems += self._identity_problems(sid, payload)
        media_id = _field(payload, "mediaId")
        info = self._state.sockets.get(sid)
        reply: dict[str, Any] = {"ok": True}
        if info is None:  # the socket is already gone
            reply = {"ok": False, "error": "not connected"}
        elif media_id is None or media_id == "":
            reply = {"ok": False, "error": "mediaId is required"}
        else:
            room = str(media_id)
            await self._sio.enter_room(sid, room)
            info.rooms.add(room)
            if self._state.rooms.join(room, sid):
                self._timelines.room_occupied(room)
        acked = self._state.faults.ackJoinRoom
        self._record_room_event("join-room", sid, payload, problems, acked=acked)
        if acked and self._state.faults.joinAckDelayMs:
            await asyncio.sleep(self._state.faults.joinAckDelayMs / 1000)
        return reply if acked else self._sio.not_handled

    async def leave_room(self, sid: str, *args: Any) -> None:
        """``leave-room``: leave room ``mediaId``."""
        payload = args[0] if args else None
        problems = _missing(payload, ("mediaId", "userId"))
        media_id = _field(payload, "mediaId")
        info = self._state.sockets.get(sid)
        if media_id is not None and info is not None:
            room = str(media_id)
            await self._sio.leave_room(sid, room)
            info.rooms.discard(room)
            if self._state.rooms.leave(room, sid):
                self._timelines.room_emptied(room)
        self._record_room_event("leave-room", sid, payload, problems)

    async def ckst(self, sid: str, *args: Any) -> None:
        """``ckst``: the player state, recorded only."""
        payload = args[0] if args else None
        problems = _missing(payload, ("mediaId", "state", "position"))
        self._record_room_event("ckst", sid, payload, problems)

    async def emit_ack(self, sid: str, *args: Any) -> Any:
        """``emit-ack``: record every one (duplicates too); ack unless ackEmitAck is off."""
        payload = args[0] if args else None
        problems = _missing(payload, ("trackingId", "event", "stage", "deviceId", "clientContext"))
        stage = _field(payload, "stage")
        if stage is not None and stage not in ACK_STAGES:
            problems.append(f"unknown stage {stage!r}")
        acked = self._state.faults.ackEmitAck
        self._state.log("acks").append(
            {
                "sid": sid,
                "trackingId": _field(payload, "trackingId"),
                "event": _field(payload, "event"),
                "stage": stage,
                "status": _field(_field(payload, "clientContext"), "status"),
                "deviceId": _field(payload, "deviceId"),
                "acked": acked,
                "payload": payload,
                "problems": problems,
            }
        )
        return {"ok": True} if acked else self._sio.not_handled

    async def receive_message(self, sid: str, *args: Any) -> None:
        """``receive-message`` (overlays with ``traceLock``), recorded only."""
        payload = args[0] if args else None
        keys = ("trackingId", "timelineId", "mediaId", "socketId", "receivedAt")
        problems = _missing(payload, keys)
        socket_id = _field(payload, "socketId")
        if socket_id is not None and socket_id != sid:
            problems.append("socketId is not the sid of this socket")
        record = {key: _field(payload, key) for key in keys}
        self._state.log("receive-messages").append(
            {"sid": sid, **record, "payload": payload, "problems": problems}
        )

    async def unknown_event(self, event: str, sid: str, *args: Any) -> None:
        """Any other event: recorded so tests can spot a misspelt name."""
        self._state.log("unknown-events").append({"sid": sid, "event": event, "args": list(args)})
        log.warning("socket %s sent unknown event %r", sid, event)

    # -- helpers ----------------------------------------------------------------------------

    def _identity_problems(self, sid: str, payload: Any) -> list[str]:
        """Where a join-room payload disagrees with the socket's handshake."""
        info = self._state.sockets.get(sid)
        if info is None or not isinstance(payload, Mapping):
            return []
        problems = []
        if info.userId is not None and payload.get("userId") not in (None, info.userId):
            problems.append("userId differs from the token's user")
        if payload.get("os") not in (None, info.os):
            problems.append("os differs from the os header")
        return problems

    def _record_room_event(
        self, kind: str, sid: str, payload: Any, problems: list[str], acked: bool | None = None
    ) -> None:
        record: dict[str, Any] = {
            "type": kind,
            "sid": sid,
            "mediaId": _field(payload, "mediaId"),
            "userId": _field(payload, "userId"),
            "payload": payload,
            "problems": problems,
        }
        if acked is not None:
            record["acked"] = acked
        self._state.log("room-events").append(record)
        log.info("%s from %s: media %s", kind, sid, record["mediaId"])
