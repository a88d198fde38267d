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
    #: ``data.number`` of a successful /api/actions reply.
    luckyNumber: int = 7
    #: Delay before every POST /v1/play reply (the request is counted and recorded at once).
    playDelayMs: int = 0
    #: How POST /v1/play misanswers: None (it does not), "garbage" (200 with an HTML page),
    #: "badDate" (``current.expiresAt`` not ISO 8601), "noOutcome" (a refusal without
    #: ``outcome``), "unknownOutcome" (``{"ok":false,"outcome":"exploded"}``).
    playReply: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The knobs as the admin API shows them (``refuseConnections`` false when off)."""
        data = asdict(self)
        data["refuseConnections"] = self.refuseConnections or False
        data["restFail"] = self.restFail or False
        data["playReply"] = self.playReply or False
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


#: The values of the ``playReply`` knob besides null/false.
PLAY_REPLIES = ("garbage", "badDate", "noOutcome", "unknownOutcome")


def _play_reply(value: Any) -> str | None:
    if value is None or value is False:
        return None
    if value in PLAY_REPLIES:
        return value
    raise ValueError(f"playReply: false or one of {', '.join(PLAY_REPLIES)}")


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
        "luckyNumber": lambda v: _int("luckyNumber", v, defaults.luckyNumber, -(2**31), 2**31 - 1),
        "playDelayMs": lambda v: _int("playDelayMs", v, 0, 0, 600_000),
        "playReply": _play_reply,
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
