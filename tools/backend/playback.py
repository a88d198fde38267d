"""Playback tickets (BACKEND.md, Playback tickets): ``POST /v1/play``, the catalogue it sells
from, and a stand-in for the upstream video platform that checks the tickets it issued.

``POST /v1/play`` needs ``X-TENANT-ID`` and a known ``Bearer`` token and a snake_case body
(``film_id``, ``episode_no``, ``union_info``, ``drm_kek``); every request is counted per
episode and recorded in ``play-requests`` before anything else. The reply is camelCase:
``{"ok":true,"current":ticket,"next":[{"episodeNo","ticket"}]}`` or
``{"ok":false,"outcome":...}``. The ``playDelayMs``, ``playReply`` and ``playNextCount`` fault
knobs apply here (and the REST middleware's ``closeWithoutReply``, ``restFraming``, ``restPadBytes``).
``GET /v1/stream/{vid}?token=`` answers 200 while a ticket issued for ``vid`` is valid and 403
once it expired (its lifetime ran out, or ``expireTickets`` was posted): the reference web player
asks it, as a real player's SDK would find out from the video platform.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from .playback_state import PLACEHOLDERS, iso_time
from .state import BackendState, bearer_token

log = logging.getLogger("backend.playback")


def hostile_ticket(ticket: dict[str, Any], mode: str | None) -> None:
    """Makes ``ticket`` what a ``playReply`` hostile-value mode says (nothing for others)."""
    if mode == "longVid":
        ticket["vid"] = "v" * (4 << 20)
    elif mode == "controlChars":
        ticket["vid"] += "\x1b[2J"
        ticket["playAuthToken"] += "\r\nX-Injected: 1"
    elif mode == "scriptSubtitles":
        ticket["subtitles"] = [{"lang": "vi", "url": "javascript:alert(1)"}]
    elif mode == "expired":
        ticket["expiresAt"] = iso_time(time.time() - 3600, True)
    elif mode == "farFuture":
        ticket["expiresAt"] = "9999-12-31T23:59:59-23:59"


def _device_problem(name: str, value: Any) -> str | None:
    if not isinstance(value, str):
        return f"{name} is missing or not a string"
    if not value.strip() or value.strip().lower() in PLACEHOLDERS:
        return f"{name} is {value!r}"
    return None


class PlaybackApi:
    """``POST /v1/play``, ``GET /v1/stream/{vid}`` and ``GET /v1/subtitles/{vid}/{lang}.vtt``."""

    def __init__(self, state: BackendState) -> None:
        self._state = state

    def register(self, app: web.Application) -> None:
        """Add the routes to ``app``."""
        app.router.add_post("/v1/play", self.play)
        app.router.add_get("/v1/stream/{vid}", self.stream)
        app.router.add_get("/v1/subtitles/{vid}/{lang}.vtt", self.subtitles)

    async def play(self, request: web.Request) -> web.StreamResponse:
        """Count and record the request, apply the faults, then answer it."""
        state = self._state
        playback = state.playback
        try:
            body: Any = await request.json()
        except ValueError:
            body = None
        body = body if isinstance(body, Mapping) else {}
        film_id, episode_no = body.get("film_id"), body.get("episode_no")
        if isinstance(film_id, str) and isinstance(episode_no, int) and not isinstance(episode_no, bool):
            key = f"{film_id}/{episode_no}"
            playback.requests[key] = playback.requests.get(key, 0) + 1
        status, reply, user_id, problems = self._answer(request, body)
        state.log("play-requests").append({
            "filmId": film_id, "episodeNo": episode_no, "unionInfo": body.get("union_info"),
            "drmKek": body.get("drm_kek"), "tenant": request.headers.get("X-TENANT-ID"),
            "bearer": "Authorization" in request.headers, "userId": user_id,
            "contentType": request.content_type, "problems": problems,
            "outcome": "ok" if reply.get("ok") else reply.get("outcome"), "status": status,
            "fault": state.faults.playReply,
        })
        log.info("play %s/%s for %s: %s", film_id, episode_no, user_id, reply.get("outcome", "ok"))
        faults = state.faults
        if faults.playDelayMs:
            await asyncio.sleep(faults.playDelayMs / 1000)
        if faults.playReply == "garbage":
            return web.Response(text="<html><body>upstream says hi</body></html>", content_type="text/html")
        if faults.playReply == "badDate" and reply.get("ok"):
            reply["current"]["expiresAt"] = "30/11/2026 10:00"
        if faults.playReply == "noOutcome" and not reply.get("ok"):
            reply.pop("outcome", None)
        if faults.playReply == "unknownOutcome":
            reply = {"ok": False, "outcome": "exploded"}
        if reply.get("ok"):
            hostile_ticket(reply["current"], faults.playReply)
        return web.json_response(reply, status=status)

    def _answer(self, request: web.Request, body: Mapping[str, Any]) -> tuple[int, dict[str, Any], str | None, list[str]]:
        """(status, reply, userId, problems) of a play request."""
        state = self._state
        if not request.headers.get("X-TENANT-ID"):
            return 400, {"ok": False, "outcome": "broken", "message": "X-TENANT-ID is required"}, None, ["no tenant"]
        try:
            token = bearer_token(request.headers.get("Authorization"))
        except ValueError:
            token = None
        user = state.user_for_token(token) if token else None
        if user is None:
            return 401, {"ok": False, "outcome": "unauthorized", "message": "a viewer token is required"}, None, ["no viewer"]
        film_id, episode_no = body.get("film_id"), body.get("episode_no")
        problems = [problem for problem in (_device_problem("union_info", body.get("union_info")),
                                            _device_problem("drm_kek", body.get("drm_kek"))) if problem]
        if not isinstance(film_id, str) or not film_id:
            problems.append("film_id is missing or not a string")
        if isinstance(episode_no, bool) or not isinstance(episode_no, int) or episode_no < 1:
            problems.append("episode_no is missing or not a whole number >= 1")
        if problems:
            return 400, {"ok": False, "outcome": "broken", "message": "; ".join(problems)}, user.userId, problems
        playback = state.playback
        film = playback.catalogue.get(film_id)
        if film is None:
            return 200, {"ok": False, "outcome": "unavailable"}, user.userId, []
        if film["outcome"] is not None:
            return 200, {"ok": False, "outcome": film["outcome"]}, user.userId, []
        if episode_no > film["episodes"]:
            return 200, {"ok": False, "outcome": "notReady"}, user.userId, []
        form = playback.date_form
        current = playback.issue(film_id, episode_no, state.base_url, fractional=form != "plain")
        count = state.faults.playNextCount
        if count is not None:
            # As many entries as asked, sharing one ticket (the point is the reply's size).
            shared = playback.issue(film_id, episode_no + 1, state.base_url, fractional=form == "fractional") if count else None
            upcoming = [{"episodeNo": episode_no + 1 + offset, "ticket": shared} for offset in range(count)]
            return 200, {"ok": True, "current": current, "next": upcoming}, user.userId, []
        last = min(film["episodes"], episode_no + film["next"])
        upcoming = [{"episodeNo": number,
                     "ticket": playback.issue(film_id, number, state.base_url, fractional=form == "fractional")}
                    for number in range(episode_no + 1, last + 1)]
        return 200, {"ok": True, "current": current, "next": upcoming}, user.userId, []

    async def stream(self, request: web.Request) -> web.Response:
        """Whether a ticket still plays ``vid``: 200 while valid, 403 when expired or unknown."""
        ticket = self._state.playback.tickets.get(request.query.get("token", ""))
        vid = request.match_info["vid"]
        if ticket is None or ticket.vid != vid:
            return web.json_response({"ok": False, "reason": "unknown ticket"}, status=403)
        if not ticket.valid(time.time()):
            return web.json_response({"ok": False, "reason": "expired"}, status=403)
        return web.json_response({"ok": True, "vid": vid})

    async def subtitles(self, request: web.Request) -> web.Response:
        """A one-cue WebVTT file for any episode and language."""
        vid, lang = request.match_info["vid"], request.match_info["lang"]
        text = f"WEBVTT\n\n00:00:01.000 --> 00:00:05.000\n[{lang}] {vid}\n"
        return web.Response(text=text, content_type="text/vtt")
