"""What the player's video SDK holds of the daemon's play tickets, and what each playback event,
stream check, end of an episode and Retry turns into (pure bookkeeping, no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class Ticket:
    """A ticket the SDK plays or preloaded. ``token`` is a secret: it is left out of ``repr``
    so that no log line can carry it."""

    film_id: str
    episode_no: int
    vid: str
    token: str = field(repr=False)
    expires_at: str = ""
    start_at: float = 0.0

    @property
    def episode(self) -> tuple[str, int]:
        return (self.film_id, self.episode_no)


def _ticket(data: dict[str, Any]) -> Optional[Ticket]:
    """A ticket from a ``playback.play`` or ``playback.preload``; None when it cannot play
    (no vid, or no token: an observer's copy)."""
    vid, token, film_id = data.get("vid"), data.get("playAuthToken"), data.get("filmId")
    episode_no, start_at = data.get("episodeNo"), data.get("startAt", 0)
    if not (isinstance(vid, str) and vid and isinstance(token, str) and token and isinstance(film_id, str)):
        return None
    if isinstance(episode_no, bool) or not isinstance(episode_no, int) or episode_no < 1:
        return None
    if isinstance(start_at, bool) or not isinstance(start_at, (int, float)) or not start_at >= 0:
        start_at = 0.0
    expires_at = data.get("expiresAt")
    return Ticket(film_id, episode_no, vid, token, expires_at if isinstance(expires_at, str) else "",
                  float(start_at))


class Tickets:
    """The current ticket (what the video plays), the preloaded ones, and the last screen state.

    A refused stream check ends the current ticket's life at the SDK (it reports the error once);
    the next ``playback.play`` replaces it. A ``paywall`` or ``message`` screen stops the video.
    """

    def __init__(self) -> None:
        self.current: Optional[Ticket] = None
        self.preloaded: dict[tuple[str, int], Ticket] = {}
        self.screen: dict[str, Any] = {}
        self.refused = False

    def play(self, data: dict[str, Any]) -> Optional[Ticket]:
        """``playback.play``: the ticket to play from its ``start_at`` (None: nothing to play)."""
        ticket = _ticket(data)
        if ticket is None:
            return None
        self.current = ticket
        self.refused = False
        self.preloaded.pop(ticket.episode, None)
        return ticket

    def preload(self, data: dict[str, Any]) -> Optional[Ticket]:
        """``playback.preload``: remembered until it plays (None: not a usable ticket)."""
        ticket = _ticket(data)
        if ticket is not None:
            self.preloaded[ticket.episode] = ticket
        return ticket

    def state(self, data: dict[str, Any]) -> str:
        """``playback.state``: the state to show. ``paywall`` and ``message`` stop the video."""
        state = str(data.get("state", ""))
        self.screen = dict(data)
        if state in ("paywall", "message"):
            self.current = None
        return state

    def to_check(self) -> Optional[Ticket]:
        """The ticket whose stream the SDK checks now: the one playing, unless already refused."""
        return None if self.refused else self.current

    def refuse(self, ticket: Ticket) -> bool:
        """The platform refused ``ticket``'s stream: True when that is news to report (the
        ticket still plays and was not refused before)."""
        if self.refused or self.current is not ticket:
            return False
        self.refused = True
        return True

    def next_episode(self) -> Optional[tuple[str, int]]:
        """The episode to start when the current one ended (the daemon says whether it exists)."""
        if self.current is None:
            return None
        return (self.current.film_id, self.current.episode_no + 1)

    def retry(self) -> Optional[tuple[str, int]]:
        """The episode a Retry starts again: the one of a ``message`` screen that allows it."""
        screen = self.screen
        film_id, episode_no = screen.get("filmId"), screen.get("episodeNo")
        if screen.get("state") != "message" or screen.get("canRetry") is not True:
            return None
        if not isinstance(film_id, str) or isinstance(episode_no, bool) or not isinstance(episode_no, int):
            return None
        return (film_id, episode_no)
