"""Fault knobs set through ``POST /_admin/fault``: their defaults, validation and JSON view.

Persistent knobs live in ``Faults`` until changed or reset. ``dropSockets``,
``disconnectSockets`` and ``stopPings`` are actions on the sockets connected at that moment;
``parse_fault_request`` separates them and admin.py carries them out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

_HTTP_STATUS_REPLY = re.compile(r"^http([1-5][0-9][0-9])$")


@dataclass
class Faults:
    """The persistent knobs; the defaults are a healthy server."""

    #: None, "connect_error" (Socket.IO CONNECT_ERROR) or "transport" (HTTP 503 before the
    #: WebSocket upgrade).
    refuseConnections: str | None = None
    #: Delay before every /api/* reply.
    restDelayMs: int = 0
    #: None, an HTTP status (400-599, HTML body) or "malformed" (200 with a non-JSON body),
    #: for every /api/* request.
    restFail: int | str | None = None
    #: How POST /api/actions replies: see ``normalize_actions_reply``.
    actionsReply: str = "success"
    #: Whether emit-ack and join-room get their Socket.IO ack.
    ackEmitAck: bool = True
    ackJoinRoom: bool = True
    #: Delay before join-room's ack (the room is entered at once).
    joinAckDelayMs: int = 0
    #: Delay before the GET /api/interactive-status reply only (after restDelayMs).
    statusDelayMs: int = 0
    #: ``data.number`` of a successful /api/actions reply.
    luckyNumber: int = 7
    #: Delay before every POST /v1/play reply (the request is counted and recorded at once).
    playDelayMs: int = 0
    #: How POST /v1/play misanswers: None (it does not), "garbage" (200 with an HTML page),
    #: "badDate" (``current.expiresAt`` not ISO 8601), "noOutcome" (a refusal without
    #: ``outcome``), "unknownOutcome" (``{"ok":false,"outcome":"exploded"}``), or one of the
    #: hostile ticket values of ``PLAY_REPLIES`` (docs/backend.md).
    playReply: str | None = None
    #: How many ``next`` entries an ok play reply carries (None: the film's own ``next``).
    playNextCount: int | None = None
    #: Whether every /api/* and POST /v1/play request, once handled (recorded, counted), gets
    #: its connection closed without a byte of reply (a server that dies under a request).
    closeWithoutReply: bool = False
    #: None, or how every /api/* and POST /v1/play request, once handled, is answered on the
    #: raw connection: "continueFlood" (``100 Continue`` without end), "chunkedEndless" (a
    #: chunked JSON body that never ends), "closeDelimitedEndless" (a JSON body without a length
    #: that never ends); each until the client closes (or 64 MiB were sent).
    restFraming: str | None = None
    #: Bytes of padding (``"_pad":[0,0,…]``, many small entries) added to every JSON reply of
    #: /api/* and POST /v1/play.
    restPadBytes: int = 0
    #: The HTTP status of a refusal in the answer shape (``actionsReply`` set to a code, and
    #: ``vipReply``).
    refusalStatus: int = 200
    #: None, or the code of a refusal ``{"success":false,"code":…}`` that
    #: GET /api/public/vip-status answers (with ``refusalStatus``).
    vipReply: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The knobs as the admin API shows them (``refuseConnections`` false when off)."""
        data = asdict(self)
        data["refuseConnections"] = self.refuseConnections or False
        data["restFail"] = self.restFail or False
        data["playReply"] = self.playReply or False
        data["restFraming"] = self.restFraming or False
        data["vipReply"] = self.vipReply or False
        return data

    def apply(self, settings: Mapping[str, Any]) -> None:
        """Set knobs already checked by ``parse_fault_request``."""
        for name, value in settings.items():
            setattr(self, name, value)


@dataclass
class FaultRequest:
    """One ``POST /_admin/fault`` body, validated."""

    #: Persistent knobs to set (already normalised; defaults for cleared ones).
    settings: dict[str, Any] = field(default_factory=dict)
    #: ``dropSockets``: None, "eof" (close the TCP connection) or "rst" (reset it).
    drop: str | None = None
    #: ``disconnectSockets``: a clean Socket.IO DISCONNECT to every socket.
    disconnect: bool = False
    #: ``stopPings``: True silences the connected sockets, False releases them, None leaves
    #: them alone.
    stop_pings: bool | None = None


def normalize_actions_reply(value: Any) -> str:
    """Check an ``actionsReply`` value: null/"success", false/"false", "malformed",
    "unauthorized" (401), "forbidden" (403), "http<NNN>" (an HTML page with that status) or
    any other non-empty string, taken as the error ``code`` of a ``success:false`` reply."""
    if value is None:
        return "success"
    if value is False:
        return "false"
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError("actionsReply: null, false or a non-empty string")


def actions_reply_status(mode: str) -> int | None:
    """The HTTP status of an ``http<NNN>`` reply mode, else None."""
    match = _HTTP_STATUS_REPLY.match(mode)
    return int(match.group(1)) if match else None


def _bool(name: str, value: Any, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected true, false or null")
    return value


def _int(name: str, value: Any, default: int, low: int, high: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name}: expected an integer from {low} to {high}, or null")
    return value


def _refuse(value: Any) -> str | None:
    if value is None or value is False:
        return None
    if value is True or value == "connect_error":
        return "connect_error"
    if value == "transport":
        return "transport"
    raise ValueError('refuseConnections: false, true, "connect_error" or "transport"')


def _rest_fail(value: Any) -> int | str | None:
    if value is None or value is False:
        return None
    if value == "malformed":
        return "malformed"
    return _int("restFail", value, 0, 400, 599)


#: The values of the ``playReply`` knob besides null/false: misanswers, then hostile ticket
#: values (a 4 MiB ``vid``; control characters in ``vid`` and ``playAuthToken``; a
#: ``javascript:`` subtitle URL; a ``current`` ticket expired an hour ago; ``expiresAt`` at
#: 9999-12-31T23:59:59-23:59, past what RFC 3339 can write in UTC).
PLAY_REPLIES = ("garbage", "badDate", "noOutcome", "unknownOutcome",
                "longVid", "controlChars", "scriptSubtitles", "expired", "farFuture")

#: The values of the ``restFraming`` knob besides null/false.
REST_FRAMINGS = ("continueFlood", "chunkedEndless", "closeDelimitedEndless")


def _one_of(name: str, value: Any, choices: tuple[str, ...]) -> str | None:
    """None for null/false, else one of ``choices``."""
    if value is None or value is False:
        return None
    if value in choices:
        return value
    raise ValueError(f"{name}: false or one of {', '.join(choices)}")


def _code(name: str, value: Any) -> str | None:
    if value is None or value is False:
        return None
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError(f"{name}: false, null or a non-empty code string")


def _optional_int(name: str, value: Any, low: int, high: int) -> int | None:
    if value is None:
        return None
    return _int(name, value, 0, low, high)


def _drop(value: Any) -> str | None:
    if value is None or value is False:
        return None
    if value is True or value == "eof":
        return "eof"
    if value == "rst":
        return "rst"
    raise ValueError('dropSockets: true, "eof" or "rst"')


def parse_fault_request(body: Any) -> FaultRequest:
    """Validate a fault body; ValueError names the first bad knob."""
    if not isinstance(body, Mapping):
        raise ValueError("the body must be a JSON object of knobs")
    defaults = Faults()
    setters = {
        "refuseConnections": _refuse,
        "restDelayMs": lambda v: _int("restDelayMs", v, 0, 0, 600_000),
        "restFail": _rest_fail,
        "actionsReply": normalize_actions_reply,
        "ackEmitAck": lambda v: _bool("ackEmitAck", v, defaults.ackEmitAck),
        "ackJoinRoom": lambda v: _bool("ackJoinRoom", v, defaults.ackJoinRoom),
        "joinAckDelayMs": lambda v: _int("joinAckDelayMs", v, 0, 0, 600_000),
        "statusDelayMs": lambda v: _int("statusDelayMs", v, 0, 0, 600_000),
        "luckyNumber": lambda v: _int("luckyNumber", v, defaults.luckyNumber, -(2**31), 2**31 - 1),
        "playDelayMs": lambda v: _int("playDelayMs", v, 0, 0, 600_000),
        "playReply": lambda v: _one_of("playReply", v, PLAY_REPLIES),
        "playNextCount": lambda v: _optional_int("playNextCount", v, 0, 200_000),
        "closeWithoutReply": lambda v: _bool("closeWithoutReply", v, defaults.closeWithoutReply),
        "restFraming": lambda v: _one_of("restFraming", v, REST_FRAMINGS),
        "restPadBytes": lambda v: _int("restPadBytes", v, 0, 0, 64 << 20),
        "refusalStatus": lambda v: _int("refusalStatus", v, defaults.refusalStatus, 200, 599),
        "vipReply": lambda v: _code("vipReply", v),
    }
    request = FaultRequest()
    for name, value in body.items():
        if name in setters:
            request.settings[name] = setters[name](value)
        elif name == "dropSockets":
            request.drop = _drop(value)
        elif name == "disconnectSockets":
            request.disconnect = _bool(name, value, False)
        elif name == "stopPings":
            if value is not None and not isinstance(value, bool):
                raise ValueError("stopPings: expected true, false or null")
            request.stop_pings = value
        else:
            raise ValueError(f"unknown knob {name!r}")
    return request
