"""Admin API for tests and demos: JSON over HTTP under ``/_admin/`` on the backend's own port.

It emits server events, shows what the backend received, sets fault knobs and changes users,
answered timelines and VOD scenarios. Every reply is JSON; errors are ``{"error": "..."}``
with status 400 (404 for an unknown VOD media). docs/backend.md is the reference.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

import socketio
from aiohttp import web

from .emits import EmitSpec, Emitter
from .faults import Faults, parse_fault_request
from .playback_state import Playback
from .scenario import RoomTimelines
from .state import LOG_NAMES, BackendState, parse_users
from .transport import ConnectionRegistry

log = logging.getLogger("backend.admin")

PREFIX = "/_admin"


def _bad(message: str) -> web.Response:
    return web.json_response({"error": message}, status=400)


async def _body(request: web.Request) -> Any:
    """The JSON body, or ValueError; an empty body is ``{}``."""
    if not request.can_read_body:
        return {}
    try:
        return await request.json()
    except ValueError:
        raise ValueError("the body is not JSON") from None


class AdminApi:
    """The ``/_admin/`` routes."""

    def __init__(
        self,
        state: BackendState,
        sio: socketio.AsyncServer,
        emitter: Emitter,
        connections: ConnectionRegistry,
        timelines: RoomTimelines,
        info: Mapping[str, Any],
    ) -> None:
        """``info`` is static server information shown by ``GET /_admin/state``."""
        self._state = state
        self._sio = sio
        self._emitter = emitter
        self._connections = connections
        self._timelines = timelines
        self._info = dict(info, pid=os.getpid())

    def register(self, app: web.Application) -> None:
        """Add every admin route to ``app``."""
        router = app.router
        router.add_get(f"{PREFIX}/state", self.get_state)
        for name in LOG_NAMES:
            router.add_get(f"{PREFIX}/{name}", self._log_handler(name))
        router.add_get(f"{PREFIX}/rooms", self.get_rooms)
        router.add_get(f"{PREFIX}/sockets", self.get_sockets)
        router.add_post(f"{PREFIX}/emit", self.post_emit)
        router.add_get(f"{PREFIX}/fault", self.get_fault)
        router.add_post(f"{PREFIX}/fault", self.post_fault)
        router.add_get(f"{PREFIX}/users", self.get_users)
        router.add_post(f"{PREFIX}/users", self.post_users)
        router.add_get(f"{PREFIX}/answered", self.get_answered)
        router.add_post(f"{PREFIX}/answered", self.post_answered)
        router.add_get(f"{PREFIX}/scenario/{{mediaId}}", self.get_scenario)
        router.add_put(f"{PREFIX}/scenario/{{mediaId}}", self.put_scenario)
        router.add_delete(f"{PREFIX}/scenario/{{mediaId}}", self.delete_scenario)
        router.add_get(f"{PREFIX}/playback", self.get_playback)
        router.add_post(f"{PREFIX}/playback", self.post_playback)
        router.add_post(f"{PREFIX}/reset", self.post_reset)

    # -- reading ----------------------------------------------------------------------------

    async def get_state(self, request: web.Request) -> web.Response:
        """A summary of everything."""
        state = self._state
        return web.json_response(
            {
                **self._info,
                "baseUrl": state.base_url,
                "faults": state.faults.to_json(),
                "silenced": self._silenced_sids(),
                "sockets": len(state.sockets),
                "rooms": {room: len(sids) for room, sids in state.rooms.to_json().items()},
                "liveRooms": self._timelines.to_json(),
                "vodMedia": sorted(state.vod),
                "users": len(state.users),
                "records": {name: len(log) for name, log in state.logs.items()},
                "lastSeq": state.sequence.last,
                "restInFlight": state.rest_in_flight,
                "restArrived": state.rest_arrived,
            }
        )

    def _log_handler(self, name: str) -> Any:
        async def handler(request: web.Request) -> web.Response:
            filters = {key: value for key, value in request.query.items() if key != "since"}
            try:
                since = int(request.query.get("since", "0"))
            except ValueError:
                return _bad("since must be an integer")
            items = self._state.log(name).query(since, filters)
            return web.json_response({"items": items, "lastSeq": self._state.sequence.last})

        handler.__doc__ = f"GET {PREFIX}/{name}: records, optionally since a seq and filtered."
        return handler

    async def get_rooms(self, request: web.Request) -> web.Response:
        """``{"rooms": {room: [sid, ...]}}``."""
        return web.json_response({"rooms": self._state.rooms.to_json()})

    async def get_sockets(self, request: web.Request) -> web.Response:
        """``{"items": [...]}``: the connected Socket.IO sockets."""
        sockets = []
        for info in self._state.sockets.values():
            connection = self._connections.get(info.eioSid)
            sockets.append(
                {**info.to_json(), "silenced": bool(connection and connection.silenced)}
            )
        return web.json_response({"items": sockets})

    async def get_users(self, request: web.Request) -> web.Response:
        """``{"users": {token: user}}``."""
        users = {token: vars(user) for token, user in self._state.users.items()}
        return web.json_response({"users": users})

    async def get_answered(self, request: web.Request) -> web.Response:
        """``{"answered": {userId: {mediaId: [timelineId]}}}``."""
        return web.json_response({"answered": self._state.answered.to_json()})

    async def get_scenario(self, request: web.Request) -> web.Response:
        """The stored VOD scenario of a media (placeholders not replaced), or 404."""
        media_id = request.match_info["mediaId"]
        if media_id not in self._state.vod:
            return web.json_response({"error": f"no scenario for {media_id}"}, status=404)
        return web.json_response({"mediaId": media_id, "scenario": self._state.vod[media_id]})

    async def get_fault(self, request: web.Request) -> web.Response:
        """The knobs and the silenced sockets."""
        return web.json_response(self._fault_view())

    # -- changing ---------------------------------------------------------------------------

    async def post_emit(self, request: web.Request) -> web.Response:
        """Emit an event to a room, one socket or everyone; reply with the emit record."""
        try:
            body = await _body(request)
            if not isinstance(body, Mapping):
                raise ValueError("the body must be a JSON object")
            spec = EmitSpec.from_json(body, extra_keys=("room", "sid"))
            room, sid = body.get("room"), body.get("sid")
            for key, value in (("room", room), ("sid", sid)):
                if value is not None and (not isinstance(value, str) or not value):
                    raise ValueError(f"{key} must be a non-empty string or null")
        except ValueError as exc:
            return _bad(str(exc))
        record = await self._emitter.emit(spec, room=room, sid=sid, source="admin")
        return web.json_response(record)

    async def post_fault(self, request: web.Request) -> web.Response:
        """Set knobs and run the socket actions; reply with the knobs, the silenced sockets and,
        per action run, the sockets it hit (``newlySilenced``, ``released``,
        ``disconnected``, ``dropped``)."""
        try:
            fault = parse_fault_request(await _body(request))
        except ValueError as exc:
            return _bad(str(exc))
        self._state.faults.apply(fault.settings)
        reply: dict[str, Any] = {}
        if fault.stop_pings is not None:
            key = "newlySilenced" if fault.stop_pings else "released"
            reply[key] = self._silence_all(fault.stop_pings)
        if fault.disconnect:
            reply["disconnected"] = sorted(self._state.sockets)
            for sid in reply["disconnected"]:
                await self._sio.disconnect(sid)
        if fault.drop is not None:
            reply["dropped"] = self._drop_all(fault.drop)
        log.info("faults now %s; actions %s", self._state.faults.to_json(), sorted(reply))
        return web.json_response({**self._fault_view(), **reply})

    async def post_users(self, request: web.Request) -> web.Response:
        """Add or replace users: ``{"users": {token: user}, "replace": false}``."""
        try:
            body = await _body(request)
            if not isinstance(body, Mapping) or set(body) - {"users", "replace"}:
                raise ValueError('expected {"users": {token: user}, "replace": bool}')
            users = parse_users(body.get("users", {}))
        except ValueError as exc:
            return _bad(str(exc))
        if body.get("replace") is True:
            self._state.users = users
        else:
            self._state.users.update(users)
        return await self.get_users(request)

    async def post_answered(self, request: web.Request) -> web.Response:
        """Mark timelines answered: ``{"userId", "mediaId", "timelineIds", "replace"}``."""
        try:
            body = await _body(request)
            if not isinstance(body, Mapping):
                raise ValueError("the body must be a JSON object")
            user_id, media_id = body.get("userId"), body.get("mediaId")
            timeline_ids = body.get("timelineIds", [])
            if not (isinstance(user_id, str) and isinstance(media_id, str)) or not (
                user_id and media_id
            ):
                raise ValueError("userId and mediaId must be non-empty strings")
            if not isinstance(timeline_ids, list) or not all(
                isinstance(t, str) for t in timeline_ids
            ):
                raise ValueError("timelineIds must be a list of strings")
        except ValueError as exc:
            return _bad(str(exc))
        store = self._state.answered
        mark = store.replace if body.get("replace") is True else store.mark
        answered = mark(user_id, media_id, timeline_ids)
        return web.json_response({"userId": user_id, "mediaId": media_id, "answered": answered})

    async def put_scenario(self, request: web.Request) -> web.Response:
        """Store a media's VOD scenario; any JSON is served verbatim (``{base}`` replaced)."""
        media_id = request.match_info["mediaId"]
        try:
            self._state.vod[media_id] = await _body(request)
        except ValueError as exc:
            return _bad(str(exc))
        return web.json_response({"mediaId": media_id, "stored": True})

    async def delete_scenario(self, request: web.Request) -> web.Response:
        """Forget a media's VOD scenario (the REST call then answers 404)."""
        media_id = request.match_info["mediaId"]
        removed = self._state.vod.pop(media_id, None) is not None
        return web.json_response({"mediaId": media_id, "removed": removed})

    async def get_playback(self, request: web.Request) -> web.Response:
        """The catalogue, the ticket settings, the tickets issued and the requests per episode."""
        return web.json_response(self._state.playback.to_json())

    async def post_playback(self, request: web.Request) -> web.Response:
        """Change the catalogue or the ticket settings, expire every ticket, reset the counts."""
        try:
            self._state.playback.configure(await _body(request))
        except ValueError as exc:
            return _bad(str(exc))
        return await self.get_playback(request)

    async def post_reset(self, request: web.Request) -> web.Response:
        """Clear records, answered timelines, faults (releasing silenced sockets) and playback
        (catalogue, ticket settings, tickets, counts);
        ``{"users": true}`` / ``{"scenarios": true}`` also restore users / VOD scenarios."""
        try:
            body = await _body(request)
            if not isinstance(body, Mapping) or set(body) - {"users", "scenarios"}:
                raise ValueError('expected {"users": bool, "scenarios": bool}')
        except ValueError as exc:
            return _bad(str(exc))
        self._state.clear_records()
        self._state.faults = Faults()
        self._state.playback = Playback()
        self._silence_all(False)
        if body.get("users") is True:
            self._state.restore_users()
        if body.get("scenarios") is True:
            self._state.restore_scenarios()
        return await self.get_state(request)

    # -- helpers ----------------------------------------------------------------------------

    def _fault_view(self) -> dict[str, Any]:
        return {"faults": self._state.faults.to_json(), "silenced": self._silenced_sids()}

    def _sid_of(self, eio_sid: str) -> str | None:
        for info in self._state.sockets.values():
            if info.eioSid == eio_sid:
                return info.sid
        return None

    def _silenced_sids(self) -> list[dict[str, str | None]]:
        return [
            {"sid": self._sid_of(eio_sid), "eioSid": eio_sid}
            for eio_sid in self._connections.silenced()
        ]

    def _silence_all(self, on: bool) -> list[dict[str, str | None]]:
        hit = []
        for connection in self._connections.all():
            if connection.silenced != on:
                connection.silence(on)
                hit.append({"sid": self._sid_of(connection.eio_sid), "eioSid": connection.eio_sid})
        return hit

    def _drop_all(self, mode: str) -> list[dict[str, str | None]]:
        hit = []
        for connection in self._connections.all():
            hit.append({"sid": self._sid_of(connection.eio_sid), "eioSid": connection.eio_sid})
            connection.drop(mode)
        return hit
