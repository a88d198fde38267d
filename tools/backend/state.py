"""Everything the backend remembers: users, answered timelines, rooms, sockets and records.

One ``BackendState`` is shared by the Socket.IO handlers, the REST API and the admin API. It is
plain data touched only from the event loop, so it needs no locks.
"""

from __future__ import annotations

import copy
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from .faults import Faults
from .playback_state import Playback

#: Records kept per log; the oldest go first. ``seq`` keeps rising, so ``since`` still works.
RECORD_CAP = 10_000

#: Names of the record logs, as used in the admin paths (``GET /_admin/<name>``).
LOG_NAMES = (
    "handshakes",
    "acks",
    "receive-messages",
    "room-events",
    "unknown-events",
    "actions",
    "rest-log",
    "emits",
    "play-requests",
)


def now_ms() -> int:
    """Milliseconds since the epoch, the unit of every ``time`` field."""
    return int(time.time() * 1000)


@dataclass
class User:
    """A viewer known to the backend, found by its bearer token."""

    userId: str
    displayName: str
    vip: bool
    bet: bool

    @classmethod
    def from_json(cls, token: str, value: Any) -> User:
        """Build a user from ``{"userId", "displayName"?, "vip"?, "bet"?}``; ValueError if bad."""
        if not isinstance(value, Mapping):
            raise ValueError(f"user {token!r}: expected an object")
        unknown = set(value) - {"userId", "displayName", "vip", "bet"}
        if unknown:
            raise ValueError(f"user {token!r}: unknown keys {sorted(unknown)}")
        user_id = value.get("userId")
        if not isinstance(user_id, str) or not user_id:
            raise ValueError(f"user {token!r}: userId must be a non-empty string")
        display = value.get("displayName", user_id.capitalize())
        vip, bet = value.get("vip", False), value.get("bet", False)
        if not isinstance(display, str) or not isinstance(vip, bool) or not isinstance(bet, bool):
            raise ValueError(f"user {token!r}: displayName is a string, vip and bet booleans")
        return cls(userId=user_id, displayName=display, vip=vip, bet=bet)


#: Users every server starts with (docs/backend.md lists them).
BUILTIN_USERS: dict[str, User] = {
    "token-alice": User("alice", "Alice", vip=True, bet=True),
    "token-bob": User("bob", "Bob", vip=False, bet=False),
    "token-carol": User("carol", "Carol", vip=True, bet=False),
    "token-dave": User("dave", "Dave", vip=False, bet=True),
}


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header; None when there is no header.

    Raises ValueError when the header is there but is not a bearer token."""
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ValueError("the Authorization header is not 'Bearer <token>'")
    return token.strip()


def parse_users(value: Any) -> dict[str, User]:
    """Parse a ``{token: user}`` table (scenario file and admin API); ValueError if bad."""
    if not isinstance(value, Mapping):
        raise ValueError("users must be an object mapping tokens to users")
    users = {}
    for token, entry in value.items():
        if not token:
            raise ValueError("a user token must be a non-empty string")
        users[token] = User.from_json(token, entry)
    return users


class Sequence:
    """The rising ``seq`` shared by every record log."""

    def __init__(self) -> None:
        self.last = 0

    def next(self) -> int:
        """The next number (the first is 1)."""
        self.last += 1
        return self.last


class RecordLog:
    """An append-only, capped list of JSON records with a shared rising ``seq``."""

    def __init__(self, sequence: Sequence) -> None:
        self._sequence = sequence
        self._items: deque[dict[str, Any]] = deque(maxlen=RECORD_CAP)

    def append(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Store a record stamped with ``seq`` and ``time``; the stored dict is returned."""
        record = {"seq": self._sequence.next(), "time": now_ms(), **fields}
        self._items.append(record)
        return record

    def query(self, since: int = 0, filters: Mapping[str, str] | None = None) -> list[dict]:
        """Records with ``seq > since`` whose top-level fields equal ``filters`` (as strings)."""
        wanted = filters or {}
        return [
            record
            for record in self._items
            if record["seq"] > since
            and all(_as_text(record.get(key)) == value for key, value in wanted.items())
        ]

    def find(self, **fields: Any) -> dict[str, Any] | None:
        """The newest record whose fields equal ``fields``, if any."""
        for record in reversed(self._items):
            if all(record.get(key) == value for key, value in fields.items()):
                return record
        return None

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        """Forget every record (``seq`` keeps rising)."""
        self._items.clear()


def _as_text(value: Any) -> str | None:
    """How a record field compares with a query-string value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: Handshake headers kept in ``handshakes`` records (the token too: this is a test peer).
HANDSHAKE_HEADERS = ("x-tenant-id", "os", "authorization", "user-agent")


def handshake_record(
    *,
    sid: str | None,
    eio_sid: str | None,
    refusal: str | None,
    headers: Mapping[str, str | None],
    auth: Any,
    user_id: str | None,
    query: str,
    transport: str,
) -> dict[str, Any]:
    """The fields of a ``handshakes`` record (``headers`` by lower-case name)."""
    return {
        "sid": sid,
        "eioSid": eio_sid,
        "accepted": refusal is None,
        "refusal": refusal,
        "tenant": headers.get("x-tenant-id"),
        "os": headers.get("os"),
        "authorization": headers.get("authorization"),
        "userAgent": headers.get("user-agent"),
        "auth": auth,
        "userId": user_id,
        "query": query,
        "transport": transport,
        "disconnectedAt": None,
        "disconnectReason": None,
    }


@dataclass
class SocketInfo:
    """A Socket.IO connection that passed CONNECT."""

    sid: str
    eioSid: str
    userId: str | None
    tenant: str
    os: str
    transport: str
    connectedAt: int = field(default_factory=now_ms)
    rooms: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        """The admin view of this socket."""
        data = asdict(self)
        data["rooms"] = sorted(self.rooms)
        return data


class Rooms:
    """Room membership (room name = mediaId), mirrored into python-socketio's rooms."""

    def __init__(self) -> None:
        self._members: dict[str, set[str]] = {}

    def join(self, room: str, sid: str) -> bool:
        """Add ``sid``; True if the room was empty before."""
        members = self._members.setdefault(room, set())
        was_empty = not members
        members.add(sid)
        return was_empty

    def leave(self, room: str, sid: str) -> bool:
        """Remove ``sid``; True if that emptied the room."""
        members = self._members.get(room)
        if not members or sid not in members:
            return False
        members.discard(sid)
        if not members:
            del self._members[room]
            return True
        return False

    def members(self, room: str) -> list[str]:
        """The sids in ``room``, sorted."""
        return sorted(self._members.get(room, ()))

    def to_json(self) -> dict[str, list[str]]:
        """``{room: [sid, ...]}`` for every non-empty room."""
        return {room: sorted(sids) for room, sids in sorted(self._members.items())}


class Answered:
    """Timelines answered successfully, per user and media (what interactive-status returns)."""

    def __init__(self) -> None:
        self._by_user: dict[str, dict[str, list[str]]] = {}

    def mark(self, user_id: str, media_id: str, timeline_ids: Iterable[str]) -> list[str]:
        """Add timelines (kept in first-answered order); returns the media's list."""
        answered = self._by_user.setdefault(user_id, {}).setdefault(media_id, [])
        for timeline_id in timeline_ids:
            if timeline_id not in answered:
                answered.append(timeline_id)
        return list(answered)

    def replace(self, user_id: str, media_id: str, timeline_ids: Iterable[str]) -> list[str]:
        """Set the media's list exactly (an empty list clears it)."""
        self._by_user.setdefault(user_id, {})[media_id] = []
        return self.mark(user_id, media_id, timeline_ids)

    def get(self, user_id: str, media_id: str) -> list[str]:
        """The timelines ``user_id`` answered in ``media_id``."""
        return list(self._by_user.get(user_id, {}).get(media_id, []))

    def users_for(self, media_id: str) -> dict[str, int]:
        """``{userId: number of answered timelines}`` for one media (the leaderboard)."""
        return {
            user_id: len(medias[media_id])
            for user_id, medias in self._by_user.items()
            if medias.get(media_id)
        }

    def to_json(self) -> dict[str, dict[str, list[str]]]:
        """``{userId: {mediaId: [timelineId, ...]}}``."""
        return copy.deepcopy(self._by_user)

    def clear(self) -> None:
        """Forget every answer."""
        self._by_user.clear()


class BackendState:
    """The whole mutable state of one backend process."""

    def __init__(
        self,
        file_users: Mapping[str, User] | None = None,
        file_vod: Mapping[str, Any] | None = None,
    ) -> None:
        self._file_users = dict(file_users or {})
        self._file_vod = copy.deepcopy(dict(file_vod or {}))
        self.sequence = Sequence()
        self.logs: dict[str, RecordLog] = {name: RecordLog(self.sequence) for name in LOG_NAMES}
        self.users: dict[str, User] = {}
        self.vod: dict[str, Any] = {}
        self.answered = Answered()
        self.rooms = Rooms()
        self.sockets: dict[str, SocketInfo] = {}
        self.faults = Faults()
        self.playback = Playback()
        self.base_url = ""
        # Requests to /api/ being served now (a restDelayMs wait included), and every one that
        # arrived since the last record reset: GET /_admin/state.
        self.rest_in_flight = 0
        self.rest_arrived = 0
        self.restore_users()
        self.restore_scenarios()

    def log(self, name: str) -> RecordLog:
        """The record log called ``name`` (one of ``LOG_NAMES``)."""
        return self.logs[name]

    def user_for_token(self, token: str) -> User | None:
        """The user owning ``token``, or None when it is unknown."""
        return self.users.get(token)

    def restore_users(self) -> None:
        """Built-in users, then the scenario file's on top."""
        self.users = {**BUILTIN_USERS, **self._file_users}

    def restore_scenarios(self) -> None:
        """VOD scenarios as the scenario file gave them."""
        self.vod = copy.deepcopy(self._file_vod)

    def clear_records(self) -> None:
        """Empty every record log and the answered store."""
        for log in self.logs.values():
            log.clear()
        self.answered.clear()
        self.rest_arrived = 0
