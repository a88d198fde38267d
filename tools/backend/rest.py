"""REST side of BACKEND.md, the leaderboard page and the overlay templates.

``/api/*`` needs ``X-TENANT-ID`` (else 400) and, when an ``Authorization`` header is sent, a
known ``Bearer`` token (else 401); calls that act for a viewer need a token (else 401). The
``restDelayMs``/``restFail``/``actionsReply``/``vipReply``/``refusalStatus``/``closeWithoutReply``/
``restFraming``/``restPadBytes`` knobs apply here. Every request outside ``/_admin/`` and
``/socket.io/`` is written to the ``rest-log``.
"""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from .faults import actions_reply_status
from .scenario import substitute
from .state import BackendState, User, bearer_token

log = logging.getLogger("backend.rest")

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
ADMIN_PREFIX = "/_admin/"
_UNLOGGED_PREFIXES = (ADMIN_PREFIX, "/socket.io/")
_USER_KEY = web.RequestKey("viewer", User)
_SENT_KEY = web.RequestKey("sent", int)
#: The most a ``restFraming`` reply sends before it gives up on the client closing.
HOSTILE_LIMIT = 64 << 20

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: Fields of a POST /api/actions body (BACKEND.md).
ACTION_FIELDS = ("mediaId", "timelineId", "os", "socketId", "userId", "mode", "answer")


def json_error(status: int, code: str, message: str) -> web.Response:
    """A JSON error in the backend's reply shape."""
    return web.json_response({"success": False, "code": code, "message": message}, status=status)


def html_page(status: int, title: str, body: str = "") -> web.Response:
    """A small HTML page, like a proxy's error page or the leaderboard."""
    text = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"</head><body><h1>{html.escape(title)}</h1>{body}</body></html>\n"
    )
    return web.Response(status=status, text=text, content_type="text/html")


def padded(response: web.Response, pad_bytes: int) -> web.Response:
    """``response`` with ``"_pad":[0,0,…]`` (about ``pad_bytes`` bytes of small entries) added
    to its JSON object; any other body is left as it is."""
    body = response.body
    if response.content_type != "application/json" or not isinstance(body, bytes) or not body.rstrip().endswith(b"}"):
        return response
    entries = max(1, pad_bytes // 2)
    pad = b'"_pad":[' + b"0," * (entries - 1) + b"0]"
    text = body.rstrip()[:-1]
    joined = text + (b"," if text.rstrip() != b"{" else b"") + pad + b"}"
    return web.Response(status=response.status, body=joined, content_type="application/json")


async def hostile_reply(request: web.Request, mode: str) -> int:
    """Answers on the raw connection as ``restFraming`` says, until the client closes it (or
    ``HOSTILE_LIMIT`` bytes went); returns the bytes handed to the connection, then closes it."""
    transport = request.transport
    if transport is None:
        return 0
    if mode == "continueFlood":
        head, piece = b"", b"HTTP/1.1 100 Continue\r\n\r\n" * 64
    elif mode == "chunkedEndless":
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n{\"_pad\":[\r\n"
        piece = b"800\r\n" + b"0," * 1024 + b"\r\n"
    else:
        head = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"_pad":['
        piece = b"0," * 1024
    sent = len(head)
    transport.write(head)
    while not transport.is_closing() and sent < HOSTILE_LIMIT:
        if transport.get_write_buffer_size() > 256 * 1024:
            await asyncio.sleep(0.001)
            continue
        transport.write(piece)
        sent += len(piece)
        await asyncio.sleep(0)
    transport.close()
    return sent


class RestApi:
    """The REST routes and the middleware that logs them and applies REST faults."""

    def __init__(self, state: BackendState) -> None:
        self._state = state

    def register(self, app: web.Application) -> None:
        """Add the routes to ``app`` (the middleware is added by the server)."""
        app.router.add_post("/api/actions", self.actions)
        app.router.add_get("/api/public/vip-status", self.vip_status)
        app.router.add_get("/api/interactive-status/{mediaId}", self.interactive_status)
        app.router.add_get("/api/ctc/scenario/v2/vod/{mediaId}/{os}", self.vod_scenario)
        app.router.add_get("/leaderboard", self.leaderboard)
        app.router.add_static("/templates/", TEMPLATES_DIR)

    # -- middleware -------------------------------------------------------------------------

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Log every non-admin request; for /api/*: faults, then tenant and token checks."""
        if request.path.startswith(_UNLOGGED_PREFIXES):
            return await handler(request)
        status = 500
        api = request.path.startswith("/api/")
        if api:
            self._state.rest_in_flight += 1
            self._state.rest_arrived += 1
        try:
            if api:
                response = await self._api(request, handler)
            else:
                response = await handler(request)
            status = response.status
            faults = self._state.faults
            if api or request.path == "/v1/play":
                if faults.closeWithoutReply:
                    status = 0
                    request.transport.close()  # handled, never answered
                elif faults.restFraming:
                    status = 0
                    request[_SENT_KEY] = await hostile_reply(request, faults.restFraming)
                elif faults.restPadBytes and isinstance(response, web.Response):
                    response = padded(response, faults.restPadBytes)
            return response
        except web.HTTPException as exc:
            status = exc.status
            raise
        finally:
            if api:
                self._state.rest_in_flight -= 1
            self._log_request(request, status)

    async def _api(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        faults = self._state.faults
        if faults.restDelayMs:
            await asyncio.sleep(faults.restDelayMs / 1000)
        if faults.restFail == "malformed":
            return web.Response(text="<html><body>upstream says hi</body></html>",
                                content_type="text/html")
        if isinstance(faults.restFail, int):
            return html_page(faults.restFail, f"{faults.restFail} (restFail fault)")
        if not request.headers.get("X-TENANT-ID"):
            return json_error(400, "MISSING_TENANT", "the X-TENANT-ID header is required")
        try:
            token = bearer_token(request.headers.get("Authorization"))
        except ValueError as exc:
            return json_error(401, "UNAUTHORIZED", str(exc))
        if token is not None:
            user = self._state.user_for_token(token)
            if user is None:
                return json_error(401, "UNAUTHORIZED", "invalid token")
            request[_USER_KEY] = user
        return await handler(request)

    def _log_request(self, request: web.Request, status: int) -> None:
        user = request.get(_USER_KEY)
        entry = {
            "method": request.method,
            "path": request.path,
            "query": request.query_string,
            "tenant": request.headers.get("X-TENANT-ID"),
            "bearer": "Authorization" in request.headers,
            "userId": user.userId if user else None,
            "status": status,
        }
        if _SENT_KEY in request:
            entry["sent"] = request[_SENT_KEY]
        self._state.log("rest-log").append(entry)

    # -- /api -------------------------------------------------------------------------------

    @staticmethod
    def _viewer(request: web.Request) -> User | None:
        return request.get(_USER_KEY)

    async def actions(self, request: web.Request) -> web.Response:
        """POST /api/actions: record the answer and reply as ``actionsReply`` says."""
        user = self._viewer(request)
        if user is None:
            return json_error(401, "UNAUTHORIZED", "login required")
        try:
            body: Any = await request.json()
        except ValueError:
            body = None
        problems = self._action_problems(request, body, user)
        valid = isinstance(body, Mapping) and "mediaId" in body and "timelineId" in body
        mode = self._state.faults.actionsReply if valid else "invalid"
        response = self._action_reply(mode)
        if mode == "success":
            self._state.answered.mark(user.userId, str(body["mediaId"]), [str(body["timelineId"])])
        self._state.log("actions").append(
            {
                "tenant": request.headers.get("X-TENANT-ID"),
                "authorization": request.headers.get("Authorization"),
                "contentType": request.headers.get("Content-Type"),
                "userId": user.userId,
                "timelineId": body.get("timelineId") if isinstance(body, Mapping) else None,
                "body": body,
                "problems": problems,
                "reply": mode,
                "status": response.status,
            }
        )
        log.info("action by %s: reply %s", user.userId, mode)
        return response

    @staticmethod
    def _action_problems(request: web.Request, body: Any, user: User) -> list[str]:
        """What a daemon test may want to know is wrong with an answer request."""
        problems = []
        if request.content_type != "application/json":
            problems.append("Content-Type is not application/json")
        if not isinstance(body, Mapping):
            return problems + ["body is not a JSON object"]
        problems += [f"missing {key}" for key in ACTION_FIELDS if key not in body]
        if body.get("mode") not in (None, "live", "vod"):
            problems.append("mode is neither live nor vod")
        if "answer" in body and not isinstance(body["answer"], Mapping):
            problems.append("answer is not an object")
        if body.get("mode") == "live" and body.get("socketId") is None:
            problems.append("socketId is null in live mode")
        if "userId" in body and str(body["userId"]) != user.userId:
            problems.append("userId differs from the token's user")
        return problems

    def _action_reply(self, mode: str) -> web.Response:
        if mode == "invalid":
            return json_error(400, "EX400", "the body needs mediaId and timelineId")
        if mode == "success":
            data = {"number": self._state.faults.luckyNumber}
            return web.json_response(
                {"success": True, "code": None, "message": "ok", "data": data}
            )
        if mode == "false":
            return web.json_response({"success": False, "code": None, "message": "not accepted"})
        if mode == "malformed":
            return web.Response(text="<html><body>Thank you!</body></html>",
                                content_type="text/html")
        if mode == "unauthorized":
            return json_error(401, "UNAUTHORIZED", "token expired")
        if mode == "forbidden":
            return json_error(403, "FORBIDDEN", "not allowed")
        status = actions_reply_status(mode)
        if status is not None:
            return html_page(status, f"{status} (actionsReply fault)")
        return json_error(self._state.faults.refusalStatus, mode, f"refused: {mode}")

    async def vip_status(self, request: web.Request) -> web.Response:
        """GET /api/public/vip-status?mediaId=: the viewer's ``{"vip", "bet"}``."""
        user = self._viewer(request)
        if user is None:
            return json_error(401, "UNAUTHORIZED", "login required")
        if not request.query.get("mediaId"):
            return json_error(400, "EX400", "the mediaId query parameter is required")
        faults = self._state.faults
        if faults.vipReply:
            return json_error(faults.refusalStatus, faults.vipReply, f"refused: {faults.vipReply}")
        return web.json_response({"vip": user.vip, "bet": user.bet})

    async def interactive_status(self, request: web.Request) -> web.Response:
        """GET /api/interactive-status/{mediaId}: the viewer's answered timelines."""
        user = self._viewer(request)
        if user is None:
            return json_error(401, "UNAUTHORIZED", "login required")
        media_id = request.match_info["mediaId"]
        answered = self._state.answered.get(user.userId, media_id)
        if self._state.faults.statusDelayMs:
            await asyncio.sleep(self._state.faults.statusDelayMs / 1000)
        return web.json_response({"answered": answered})

    async def vod_scenario(self, request: web.Request) -> web.Response:
        """GET /api/ctc/scenario/v2/vod/{mediaId}/{os}: the media's VOD scenario, or 404."""
        media_id = request.match_info["mediaId"]
        if media_id not in self._state.vod:
            return json_error(404, "TL404", f"no scenario for media {media_id}")
        body = substitute(self._state.vod[media_id], {"{base}": self._state.base_url})
        return web.json_response(body)

    # -- pages ------------------------------------------------------------------------------

    async def leaderboard(self, request: web.Request) -> web.Response:
        """GET /leaderboard?mediaId=&tenant=: answered timelines per viewer, as HTML."""
        media_id = request.query.get("mediaId")
        if not media_id:
            return html_page(400, "Leaderboard", "<p>mediaId is required</p>")
        names = {user.userId: user.displayName for user in self._state.users.values()}
        scores = sorted(self._state.answered.users_for(media_id).items(), key=lambda i: -i[1])
        rows = "".join(
            f"<tr><td>{rank}</td><td>{html.escape(names.get(uid, uid))}</td><td>{count}</td></tr>"
            for rank, (uid, count) in enumerate(scores, start=1)
        ) or "<tr><td colspan='3'>No answers yet</td></tr>"
        tenant = html.escape(request.query.get("tenant", ""))
        body = (
            f"<p>Media <b>{html.escape(media_id)}</b>, tenant <b>{tenant}</b></p>"
            f"<table><tr><th>#</th><th>Viewer</th><th>Answers</th></tr>{rows}</table>"
        )
        return html_page(200, "Leaderboard", body)
