"""The player's video SDK, simulated honestly (the real SDK is not available here).

The TV page's video plays what ``playback.play`` says, from ``startAt`` (the local clip stands in
for every ``vid``). Like a real SDK, it finds out from the video platform that its ticket no
longer plays: every ``check_interval`` seconds it asks ``GET {platform}/v1/stream/{vid}?token=``
(the reference backend answers 403 once the ticket expired). A refusal is the SDK's error: the
video stops and the player reports ``playback.error`` at the video's position; the daemon's fresh
ticket (a new ``playback.play``) resumes there. The token goes into that request only: it is
never logged.
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any, Optional

from .engine import Engine
from .tickets import Ticket, Tickets

log = logging.getLogger("player")

CHECK_INTERVAL = 2.0
CHECK_TIMEOUT = 5.0


def stream_check(platform: str, ticket: Ticket) -> tuple[int, str]:
    """One blocking ``GET /v1/stream/{vid}?token=`` (run it in a thread): the HTTP status and
    the platform's reason (0 and the error when the platform could not be asked)."""
    query = urllib.parse.urlencode({"token": ticket.token})
    url = f"{platform.rstrip('/')}/v1/stream/{urllib.parse.quote(ticket.vid, safe='')}?{query}"
    try:
        with urllib.request.urlopen(url, timeout=CHECK_TIMEOUT) as reply:
            return reply.status, ""
    except urllib.error.HTTPError as error:
        try:
            reason = str(json.loads(error.read() or b"{}").get("reason", ""))
        except (ValueError, AttributeError):
            reason = ""
        return error.code, reason
    except (OSError, ValueError) as error:
        return 0, type(error).__name__


class VideoSDK:
    """Plays the tickets on the TV page and checks them with the platform.

    ``report(method, params)`` queues a daemon call; ``screenshot(what, name)`` takes one (or
    does nothing without ``--screenshot-dir``); ``page_errors`` are what a call of the page may
    raise when the page does not answer.
    """

    def __init__(self, engine: Engine, device: dict[str, str],
                 report: Callable[[str, dict[str, Any]], None],
                 screenshot: Callable[[str, str], Awaitable[None]],
                 page_errors: tuple[type[BaseException], ...],
                 check_interval: float = CHECK_INTERVAL) -> None:
        self.engine = engine
        self.page_errors = page_errors
        self.device = dict(device)
        self.tickets = Tickets()
        self.platform: Optional[str] = None
        self.check_interval = check_interval
        self._report = report
        self._screenshot = screenshot
        self._unusable_platform_logged = False
        self._play_shot: Optional[str] = None  # the vid whose picture is taken once the screen says playing

    def connected(self, config: dict[str, Any]) -> None:
        """The video platform is the daemon's playback origin (``playbackUrl``, else ``apiUrl``)."""
        origin = config.get("playbackUrl") or config.get("apiUrl")
        self.platform = origin if isinstance(origin, str) and origin else None

    def start(self, film_id: str, episode_no: int) -> None:
        """``playback.start`` with the SDK's device values."""
        log.info("starting %s episode %d", film_id, episode_no)
        self._report("playback.start", {"filmId": film_id, "episodeNo": episode_no, "device": self.device})

    async def handle(self, kind: str, data: dict[str, Any]) -> None:
        """A ``playback.`` event."""
        if kind == "playback.play":
            ticket = self.tickets.play(data)
            if ticket is None:
                log.warning("playback.play without a playable ticket (an observer's copy?)")
                return
            log.info("playing %s (%s episode %d) from %.1f s, ticket until %s", ticket.vid, ticket.film_id,
                     ticket.episode_no, ticket.start_at, ticket.expires_at or "?")
            languages = [entry.get("lang") for entry in data.get("subtitles") or [] if isinstance(entry, dict)]
            resume = ticket.start_at > 0
            # A resume is pictured at the position it resumes from, before the video moves on.
            await self.engine.tv("playEpisode", {
                "vid": ticket.vid, "filmId": ticket.film_id, "episodeNo": ticket.episode_no,
                "startAt": ticket.start_at, "subtitles": [str(lang) for lang in languages if lang]}, not resume)
            await self._show_preloaded()
            if resume:
                await self._screenshot("playback-resumed", ticket.vid)
                await self.engine.tv("playVideo")
            else:
                self._play_shot = ticket.vid
        elif kind == "playback.preload":
            ticket = self.tickets.preload(data)
            if ticket is not None:
                log.info("preloaded %s (%s episode %d)", ticket.vid, ticket.film_id, ticket.episode_no)
                await self._show_preloaded()
        elif kind == "playback.state":
            await self.show_state(data)

    async def _show_preloaded(self) -> None:
        await self.engine.tv("setPreloaded", sorted(t.vid for t in self.tickets.preloaded.values()))

    async def show_state(self, data: dict[str, Any]) -> None:
        """What ``playback.state`` (or a snapshot's ``playback.screen``) says to show."""
        state = self.tickets.state(data)
        log.info("playback screen: %s%s", state, f" ({data.get('text')})" if state == "message" else "")
        await self.engine.tv("setPlaybackState", data)
        if state == "playing" and self._play_shot is not None:
            vid, self._play_shot = self._play_shot, None
            await self._screenshot("playback-play", vid)
        elif state in ("paywall", "message"):
            await self._screenshot(f"playback-{state}", f"{data.get('filmId', '')}-{data.get('episodeNo', '')}")

    def page_report(self, report: dict[str, Any]) -> bool:
        """The page's playback reports (end of an episode, Retry, back from standby); False
        when the report is not about playback."""
        event, name = report.get("event"), report.get("name")
        if event == "playback.ended":
            episode = self.tickets.next_episode()
            if episode is not None:
                self.start(*episode)
        elif event == "action" and name == "playback.retry":
            episode = self.tickets.retry()
            if episode is not None:
                self.start(*episode)
        elif event == "playback.foreground":
            position = report.get("position")
            if self.tickets.current is not None and isinstance(position, (int, float)) and position >= 0:
                self._report("playback.foreground", {"position": float(position)})
        else:
            return False
        return True

    async def check_streams(self) -> None:
        """Every ``check_interval`` seconds, the playing ticket's stream check; runs until
        cancelled (once per daemon connection)."""
        while True:
            await asyncio.sleep(self.check_interval)
            ticket = self.tickets.to_check()
            if ticket is None or self.platform is None:
                continue
            try:
                await self._check(self.platform, ticket)
            except self.page_errors as error:
                # The page did not answer (the browser is going away): logged, the loop goes on.
                log.warning("the stream check of %s: %s", ticket.vid, error)

    async def _check(self, platform: str, ticket: Ticket) -> None:
        status, reason = await asyncio.to_thread(stream_check, platform, ticket)
        if status != 403:
            if status != 200 and not self._unusable_platform_logged:
                self._unusable_platform_logged = True
                log.warning("the stream check of %s got %s; only a 403 counts as a refusal",
                            ticket.vid, status or reason)
            return
        if self.tickets.refuse(ticket):  # else a new ticket arrived meanwhile
            position = await self.engine.tv("streamRefused", f"the platform refused the stream ({reason or 403})")
            position = float(position) if isinstance(position, (int, float)) and position >= 0 else 0.0
            log.info("the platform refused %s (%s) at %.1f s: reporting playback.error", ticket.vid,
                     reason or "403", position)
            await self._screenshot("playback-refused", ticket.vid)  # the stopped video, before the resume
            self._report("playback.error", {"position": position, "message": f"stream refused: {reason or 403}"})
