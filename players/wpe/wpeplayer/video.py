"""The TV page's video in the WPE player: the host plays it under the views (GStreamer in
wpe-host), the page drives it as if it were its own <video> (players/shared/page/host-video.js).

The page's commands (its ``video`` reports: ``seek``, ``play``, ``pause``) become the host's
``video-seek``, ``video-resume`` and ``video-pause``; the host's video events (``video-playing``,
``video-seeked``, ``video-ended``, ``video-error``) and the pause's outcome go back to the page as
``window.tv.hostVideo(news)``, in the order they happened.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Optional

from wpehost import WpeHost

log = logging.getLogger(__name__)

# The host's video events, as the page's news.
NEWS = {"video-playing": "playing", "video-seeked": "seeked", "video-ended": "ended", "video-error": "error"}


class HostVideoRelay:
    """``tell(news)`` hands news to the page (in order); ``command`` and ``host_event`` are fed
    by the engine."""

    def __init__(self, host: WpeHost, tell: Callable[[dict[str, Any]], None]) -> None:
        self.host = host
        self._tell = tell

    def command(self, report: dict[str, Any]) -> None:
        """A command of the page's video."""
        command = report.get("command")
        if command == "seek":
            position = report.get("position")
            if not isinstance(position, (int, float)) or position < 0:
                return
            fields: dict[str, Any] = {"position": float(position)}
            if isinstance(report.get("loop"), bool):
                fields["loop"] = report["loop"]
            self._send("video-seek", fields, None)
        elif command == "play":
            self._send("video-resume", {}, None)
        elif command == "pause":
            self._send("video-pause", {}, "paused")

    def host_event(self, event: dict[str, Any]) -> bool:
        """A host event: True when it was the video's (and went to the page)."""
        news = NEWS.get(str(event.get("event")))
        if news is None:
            return False
        if news == "error":
            log.warning("the video %s: %s", event.get("file"), event.get("message"))
        self._tell(self._news(news, event))
        return True

    async def sync(self) -> None:
        """Tells the page what the host's video is doing now (once the page is up)."""
        status = await self.host.request("video-status")
        self._tell(self._news("status", status))

    def _send(self, cmd: str, fields: dict[str, Any], news: Optional[str]) -> None:
        reply = self.host.send(cmd, **fields)

        def answered(future: Any) -> None:
            if future.cancelled() or future.exception() is not None:
                return
            answer = future.result()
            if answer.get("event") == "error":
                log.info("%s: %s", cmd, answer.get("message"))
                self._tell({"event": "error"})
            elif news is not None:
                self._tell(self._news(news, answer))
        reply.add_done_callback(answered)

    @staticmethod
    def _news(news: str, fields: dict[str, Any]) -> dict[str, Any]:
        told: dict[str, Any] = {"event": news}
        for name in ("position", "duration", "state", "looped"):
            if name in fields:
                told[name] = fields[name]
        return told

