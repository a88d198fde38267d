"""The voice room (docs/ipc.md, "Voice rooms"): ``daemon.status``'s ``voice`` as a
:class:`VoiceRoom`, kept up to date with the ``voice.state``, ``voice.peer`` and
``voice.talking`` events."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

#: The events of the voice room (a prefix for ``client.events(types=...)``).
VOICE_EVENTS = "voice."
VOICE_STATE = "voice.state"
VOICE_PEER = "voice.peer"
VOICE_TALKING = "voice.talking"
#: ``voice.state`` states in which this box is in the room or on its way there.
ACTIVE_STATES = ("connecting", "joined", "reconnecting")


@dataclass(frozen=True)
class VoiceParticipant:
    """One participant of the room, this box included (its ``peer_id`` is the room's ``self_id``)."""

    peer_id: str
    display: Optional[str] = None
    muted: bool = False
    talking: bool = False

    @classmethod
    def from_json(cls, value: Any) -> Optional["VoiceParticipant"]:
        """``{peerId, display, muted, talking}``; None without a ``peerId``."""
        if not isinstance(value, dict) or not isinstance(value.get("peerId"), str):
            return None
        display = value.get("display")
        return cls(value["peerId"], display if isinstance(display, str) else None,
                   value.get("muted") is True, value.get("talking") is True)


@dataclass
class VoiceRoom:
    """The voice room as ``daemon.status`` shows it (``voice``; also ``voice.join``'s result),
    and then as the events change it: :meth:`apply` each ``voice.*`` event.

    ``participants`` lists this box first when the daemon does. A ``voice.state`` carries only
    the number of participants: when it does not match the list (another client joined a room,
    a reconnection re-read it), ``needs_status`` is set and the list is to be read again from
    ``daemon.status`` (:meth:`Client.voice_status`).
    """

    room: str
    state: str
    self_id: Optional[str] = None
    muted: bool = False
    participants: list[VoiceParticipant] = field(default_factory=list)
    #: ``{name, message}`` in ``error``.
    error: Optional[dict[str, Any]] = None
    #: Why the box is out (``left``: ``left``, ``kicked``, ``replaced``; ``closed``).
    reason: Optional[str] = None
    #: A ``voice.state`` said a number of participants the list does not have.
    needs_status: bool = False

    @classmethod
    def from_status(cls, voice: Any) -> Optional["VoiceRoom"]:
        """``daemon.status``'s ``voice`` (or ``voice.join``'s result); None for null."""
        if not isinstance(voice, dict) or not isinstance(voice.get("room"), str) \
                or not isinstance(voice.get("state"), str):
            return None
        self_id = voice.get("selfId")
        error = voice.get("error")
        participants = [p for p in map(VoiceParticipant.from_json, voice.get("participants") or []) if p]
        return cls(voice["room"], voice["state"], self_id if isinstance(self_id, str) else None,
                   voice.get("muted") is True, participants, error if isinstance(error, dict) else None)

    @property
    def joined(self) -> bool:
        """Whether the box is in the room now."""
        return self.state == "joined"

    @property
    def active(self) -> bool:
        """In the room or on its way there (``connecting``, ``joined``, ``reconnecting``)."""
        return self.state in ACTIVE_STATES

    @property
    def others_talking(self) -> list[VoiceParticipant]:
        """The participants other than this box who are talking now (what lowers the programme)."""
        return [p for p in self.participants if p.talking and p.peer_id != self.self_id]

    def participant(self, peer_id: str) -> Optional[VoiceParticipant]:
        return next((p for p in self.participants if p.peer_id == peer_id), None)

    def apply(self, event_type: str, data: dict[str, Any]) -> bool:
        """Applies a ``voice.state``, ``voice.peer`` or ``voice.talking`` event's data; returns
        whether the room changed. An event of another room than this one is ignored, except a
        ``voice.state``, which names the room now."""
        if event_type == VOICE_STATE:
            return self._apply_state(data)
        if data.get("room") != self.room or not isinstance(data.get("peerId"), str):
            return False
        peer_id = data["peerId"]
        if event_type == VOICE_PEER:
            return self._apply_peer(peer_id, data)
        if event_type == VOICE_TALKING and isinstance(data.get("talking"), bool):
            return self._update(peer_id, talking=data["talking"])
        return False

    def apply_mute(self, result: dict[str, Any]) -> None:
        """``voice.mute``'s result ``{room, muted}``: this box's mute in force."""
        if result.get("room") == self.room and isinstance(result.get("muted"), bool):
            self.muted = result["muted"]
            if self.self_id is not None:
                self._update(self.self_id, muted=self.muted)

    def _apply_state(self, data: dict[str, Any]) -> bool:
        room, state = data.get("room"), data.get("state")
        if not isinstance(room, str) or not isinstance(state, str):
            return False
        before = (self.room, self.state, self.self_id, self.muted, list(self.participants), self.error)
        if room != self.room:
            self.participants = []
        self.room, self.state = room, state
        self_id = data.get("selfId")
        self.self_id = self_id if isinstance(self_id, str) else self.self_id
        self.muted = data.get("muted") is True
        error = data.get("error")
        self.error = error if isinstance(error, dict) else None
        reason = data.get("reason")
        self.reason = reason if isinstance(reason, str) else None
        if state in ACTIVE_STATES:
            if self.self_id is not None:
                self._update(self.self_id, muted=self.muted)
            count = data.get("participants")
            self.needs_status = isinstance(count, int) and count != len(self.participants)
        else:
            self.participants = []
            self.needs_status = False
        return before != (self.room, self.state, self.self_id, self.muted, self.participants, self.error)

    def _apply_peer(self, peer_id: str, data: dict[str, Any]) -> bool:
        change = data.get("event")
        display = data.get("display") if isinstance(data.get("display"), str) else None
        if change == "left":
            before = len(self.participants)
            self.participants = [p for p in self.participants if p.peer_id != peer_id]
            return len(self.participants) != before
        if change not in ("joined", "updated"):
            return False
        if self.participant(peer_id) is None:
            self.participants.append(VoiceParticipant(peer_id, display, data.get("muted") is True))
            return True
        return self._update(peer_id, display=display, muted=data.get("muted") is True)

    def _update(self, peer_id: str, **changes: Any) -> bool:
        changes = {name: value for name, value in changes.items() if value is not None}
        for index, participant in enumerate(self.participants):
            if participant.peer_id == peer_id:
                changed = replace(participant, **changes)
                self.participants[index] = changed
                return changed != participant
        return False
