"""What the playback API sells and remembers: the catalogue of films and episodes, the ticket
settings, the tickets issued and the requests counted per episode (playback.py serves them).
"""

from __future__ import annotations

import copy
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

#: Why ``POST /v1/play`` may refuse a film (``catalogue[film]["outcome"]``).
OUTCOMES = ("locked", "unavailable", "notReady", "busy", "broken")
#: How ``expiresAt`` is written: with milliseconds, without, or current with and next without.
DATE_FORMS = ("fractional", "plain", "mixed")
#: Device values an SDK writes where a value is missing; the backend refuses them too.
PLACEHOLDERS = ("(null)", "nil", "null", "undefined")

#: The catalogue every server starts with: one film per outcome, and playable ones.
BUILTIN_CATALOGUE: dict[str, dict[str, Any]] = {
    "f1": {"title": "River Days", "episodes": 6, "subtitles": ["vi", "en"]},
    "f2": {"title": "Night Market", "episodes": 2},
    "f-locked": {"title": "Premium Drama", "episodes": 10, "outcome": "locked"},
    "f-unavailable": {"title": "Withdrawn Show", "episodes": 3, "outcome": "unavailable"},
    "f-notready": {"title": "Coming Soon", "episodes": 1, "outcome": "notReady"},
    "f-busy": {"title": "Overloaded Hit", "episodes": 4, "outcome": "busy"},
    "f-broken": {"title": "Broken Upload", "episodes": 4, "outcome": "broken"},
}


def iso_time(epoch_seconds: float, fractional: bool) -> str:
    """ISO 8601 in UTC with ``Z``, with or without milliseconds."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=timezone.utc)
    if fractional:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_film(film_id: str, value: Any) -> dict[str, Any]:
    """Check one catalogue entry ``{"title", "episodes", "outcome"?, "subtitles"?, "next"?}``."""
    if not isinstance(value, Mapping):
        raise ValueError(f"film {film_id!r}: expected an object")
    unknown = set(value) - {"title", "episodes", "outcome", "subtitles", "next"}
    if unknown:
        raise ValueError(f"film {film_id!r}: unknown keys {sorted(unknown)}")
    episodes = value.get("episodes", 1)
    if isinstance(episodes, bool) or not isinstance(episodes, int) or not 1 <= episodes <= 10_000:
        raise ValueError(f"film {film_id!r}: episodes must be an integer from 1 to 10000")
    outcome = value.get("outcome")
    if outcome is not None and (not isinstance(outcome, str) or not outcome):
        raise ValueError(f"film {film_id!r}: outcome is null or a string ({', '.join(OUTCOMES)} or any other)")
    subtitles = value.get("subtitles", [])
    if not isinstance(subtitles, list) or not all(isinstance(lang, str) and lang for lang in subtitles):
        raise ValueError(f"film {film_id!r}: subtitles must be a list of language codes")
    next_count = value.get("next", 2)
    if isinstance(next_count, bool) or not isinstance(next_count, int) or not 0 <= next_count <= 2:
        raise ValueError(f"film {film_id!r}: next must be 0, 1 or 2")
    return {"title": str(value.get("title", film_id)), "episodes": episodes, "outcome": outcome,
            "subtitles": list(subtitles), "next": next_count}


@dataclass
class Ticket:
    """A play ticket the backend issued."""

    vid: str
    token: str
    expires_at: float
    expired: bool = False

    def valid(self, now: float) -> bool:
        """Not expired by time or by ``expireTickets``."""
        return not self.expired and now < self.expires_at


@dataclass
class Playback:
    """The catalogue, the ticket settings and what was issued and asked for."""

    catalogue: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {film: parse_film(film, entry) for film, entry in BUILTIN_CATALOGUE.items()}
    )
    #: How long a ticket lives.
    ticket_lifetime: float = 600.0
    date_form: str = "mixed"
    #: Requests per ``"film/episode"`` (every POST /v1/play that named one, valid or not).
    requests: dict[str, int] = field(default_factory=dict)
    #: Tickets by token.
    tickets: dict[str, Ticket] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The admin view (tokens left out)."""
        now = time.time()
        return {
            "catalogue": copy.deepcopy(self.catalogue),
            "ticketLifetimeSec": self.ticket_lifetime,
            "dateForm": self.date_form,
            "requests": dict(sorted(self.requests.items())),
            "tickets": {"issued": len(self.tickets),
                        "valid": sum(1 for ticket in self.tickets.values() if ticket.valid(now))},
        }

    def configure(self, body: Any) -> None:
        """Apply ``POST /_admin/playback``; ValueError names the first bad key (nothing applied)."""
        if not isinstance(body, Mapping):
            raise ValueError("the body must be a JSON object")
        unknown = set(body) - {"films", "replaceCatalogue", "ticketLifetimeSec", "dateForm", "expireTickets",
                               "resetCounts"}
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)}")
        films = body.get("films", {})
        if not isinstance(films, Mapping):
            raise ValueError("films must map film ids to films")
        parsed = {str(film): parse_film(str(film), entry) for film, entry in films.items()}
        lifetime = body.get("ticketLifetimeSec", self.ticket_lifetime)
        if isinstance(lifetime, bool) or not isinstance(lifetime, (int, float)) or not 0 <= lifetime <= 86_400:
            raise ValueError("ticketLifetimeSec must be a number from 0 to 86400")
        date_form = body.get("dateForm", self.date_form)
        if date_form not in DATE_FORMS:
            raise ValueError(f"dateForm must be one of {', '.join(DATE_FORMS)}")
        if body.get("replaceCatalogue") is True:
            self.catalogue = {}
        self.catalogue.update(parsed)
        self.ticket_lifetime = float(lifetime)
        self.date_form = date_form
        if body.get("expireTickets") is True:
            for ticket in self.tickets.values():
                ticket.expired = True
        if body.get("resetCounts") is True:
            self.requests.clear()

    def issue(self, film_id: str, episode_no: int, base_url: str, fractional: bool) -> dict[str, Any]:
        """A new ticket for one episode, as the reply shows it."""
        now = time.time()
        vid = f"{film_id}-e{episode_no}"
        token = "pat_" + secrets.token_urlsafe(18)
        ticket = Ticket(vid, token, now + self.ticket_lifetime)
        self.tickets[token] = ticket
        subtitles = [{"lang": lang, "url": f"{base_url}/v1/subtitles/{vid}/{lang}.vtt"}
                     for lang in self.catalogue[film_id]["subtitles"]]
        return {"vid": vid, "playAuthToken": token, "expiresAt": iso_time(ticket.expires_at, fractional),
                "subtitles": subtitles}
