"""The voice room on screen (docs/players.md, "Voice rooms"): what the panel shows, when the
programme's volume goes down (ducking) and back, and what the mute key asks the daemon. Pure
decisions over the client library's ``VoiceRoom``; the player draws them and makes the calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from interactived_client import VoiceRoom

#: The programme's volume while someone other than this box talks: 0.3 is about -10 dB, low
#: enough to follow a friend, high enough to keep the programme.
DUCKED_VOLUME = 0.3
NORMAL_VOLUME = 1.0
#: Down quickly, so the first words are heard; back slowly, and only after a short hold, so
#: the pauses between a friend's words do not pump the programme up and down.
DUCK_RAMP_MS = 250
RESTORE_HOLD_MS = 600
RESTORE_RAMP_MS = 800
#: The states in which the panel is shown (``reconnecting`` keeps it, saying so).
PANEL_STATES = ("joined", "reconnecting")


@dataclass(frozen=True)
class VolumeChange:
    """Move the programme's volume to ``level`` over ``ramp_ms``, after ``delay_ms``."""

    level: float
    ramp_ms: int
    delay_ms: int = 0


class VoicePanel:
    """The room as the player knows it (``redraw`` from a status, ``apply`` each event) and what
    follows for the screen."""

    def __init__(self) -> None:
        self.room: Optional[VoiceRoom] = None
        self._ducked = False

    def redraw(self, voice: Any) -> None:
        """``daemon.status``'s (or a snapshot's) ``voice``."""
        self.room = VoiceRoom.from_status(voice)

    def page_reloaded(self) -> None:
        """The TV page was loaded again: its programme is at the normal volume."""
        self._ducked = False

    def apply(self, kind: str, data: dict[str, Any]) -> bool:
        """A ``voice.*`` event; True when the participants are to be read again from
        ``daemon.status`` (a room not seen yet, or a count the list does not match)."""
        if self.room is None:
            return kind == "voice.state"
        self.room.apply(kind, data)
        return self.room.needs_status

    def muted(self, result: dict[str, Any]) -> None:
        """``voice.mute``'s result."""
        if self.room is not None:
            self.room.apply_mute(result)

    @property
    def shown(self) -> bool:
        return self.room is not None and self.room.state in PANEL_STATES

    def view(self) -> Optional[dict[str, Any]]:
        """What the TV page's ``setVoice`` draws, None for no panel."""
        room = self.room
        if room is None or not self.shown:
            return None
        return {"room": room.room, "state": room.state, "muted": room.muted,
                "participants": [{"peerId": p.peer_id, "display": p.display or p.peer_id, "muted": p.muted,
                                  "talking": p.talking, "self": p.peer_id == room.self_id}
                                 for p in room.participants]}

    def talkers(self) -> list[str]:
        """The ids of the others talking now (what ducks the programme), while the panel shows."""
        return [p.peer_id for p in self.room.others_talking] if self.room is not None and self.shown else []

    def volume_change(self) -> Optional[VolumeChange]:
        """The programme's next move when ducking starts or ends, else None."""
        ducked = bool(self.talkers())
        if ducked == self._ducked:
            return None
        self._ducked = ducked
        if ducked:
            return VolumeChange(DUCKED_VOLUME, DUCK_RAMP_MS)
        return VolumeChange(NORMAL_VOLUME, RESTORE_RAMP_MS, RESTORE_HOLD_MS)

    def mute_request(self) -> Optional[dict[str, Any]]:
        """The ``voice.mute`` params the mute key asks for (the other way round), None outside a room."""
        if self.room is None or not self.shown:
            return None
        return {"muted": not self.room.muted}
