"""The WPE WebKit engine of the reference player (playercore.engine.Engine), over wpe-host.

The screen is the host's: the video at the bottom, each overlay in a view of its own (z 0), and
the TV page (players/shared/page, ``?overlays=views&video=host``) in a full-screen, transparent
view above them all (z 1), so that its predict/lucky buttons, dialogs and toasts are above the
overlays; where it draws nothing, clicks go through to the view below. One view per overlay
because a script message carries no frame in WebKit 2.38: the view is the overlay's identity.

Overlay views register the engine's own ``IOS`` handler (``window.webkit.messageHandlers.IOS``,
no shim): each ``ios-message`` is that overlay's ``overlay.bridge``. Their remote
(players/shared/page/overlay-remote.js with spatial.js and ``overlay.js``) runs in the view's
isolated world and hands the focus back through the host's ``host`` handler. The TV view
registers ``tv``: its reports count only while it holds the TV page. Which view has the
remote's focus is the TV page's call (its ``focus`` reports), the video's commands go to the
host (``video.py``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlsplit

from playercore.engine import PAGE_DIR, Engine, post_script, tv_call
from playercore.outcomes import LoadOutcome, LoadOutcomes
from playercore.placement import Box
from wpehost import SPATIAL_SCRIPT, HostError, WpeHost

from .video import HostVideoRelay

log = logging.getLogger(__name__)

TV_VIEW = "tv"
TV_Z, OVERLAY_Z = 1, 0
READY_TIMEOUT = 20.0
CALL_TIMEOUT = 10.0
POST_TIMEOUT = 3.0
# A view has settled once it delivered no frame for SETTLE_QUIET_MS after two animation frames.
# The TV page repaints its episode clock every 100 ms, so it does not settle while an episode
# plays: after TV_SETTLE_TIMEOUT of frames what it changed before is in one of them.
SETTLE_QUIET_MS = 150
SETTLE_TIMEOUT = 2.0
TV_SETTLE_TIMEOUT = 0.6
RESTORE_ATTEMPTS = 3
OVERLAY_REMOTE = Path(__file__).resolve().parent / "overlay.js"


def overlay_script() -> str:
    """The overlay view's remote, in one function (the host world's globals get only
    ``interactivedRemote``)."""
    parts = [SPATIAL_SCRIPT.read_text(), OVERLAY_REMOTE.read_text(), (PAGE_DIR / "overlay-remote.js").read_text()]
    return "(function () {\n'use strict';\n" + "\n".join(parts) + "\n})();\n"


class WpeEngine(Engine):
    """The player's screen on a running :class:`WpeHost` (``open`` loads the TV page)."""

    page_errors = (HostError,)

    def __init__(self, host: WpeHost) -> None:
        super().__init__(int(host.ready["width"]), int(host.ready["height"]))
        self.host = host
        self.video = HostVideoRelay(host, self._tell_video)
        self._outcomes = LoadOutcomes()
        self._view_of: dict[str, str] = {}  # overlay id: its view
        self._overlay_of: dict[str, str] = {}  # view: its overlay id
        self._views = itertools.count(1)
        self._tv_document = (PAGE_DIR / "tv.html").resolve().as_uri()
        self._on_tv_page = False
        self._ready = asyncio.Event()
        self._restoring: Optional[asyncio.Task[None]] = None
        self._leaving: set[str] = set()  # overlays whose view is handing the focus back
        self._tasks: set[asyncio.Task[Any]] = set()
        self._script = overlay_script()
        host.listen(self._on_event)

    async def open(self) -> None:
        """Creates the TV view and waits until its page is up."""
        await self.host.create_view(TV_VIEW, kind="tv", z=TV_Z, visible=True,
                                    url=self._tv_document + "?overlays=views&video=host")
        await self._page_up()

    async def _page_up(self) -> None:
        async with asyncio.timeout(READY_TIMEOUT):
            await self._ready.wait()
        await self.video.sync()

    # ---- the Engine ----

    async def tv(self, function: str, *arguments: Any) -> Any:
        return await self.host.run_js(TV_VIEW, "return await " + tv_call(function, arguments), is_async=True,
                                      timeout=CALL_TIMEOUT)

    async def show_overlay(self, overlay: dict[str, Any], box: Box) -> None:
        overlay_id = str(overlay["overlayId"])
        await self._destroy_view(overlay_id)
        view = f"overlay-{next(self._views)}"
        self._view_of[overlay_id] = view
        self._overlay_of[view] = overlay_id
        self._outcomes.expect(overlay_id)
        await self.tv("showOverlay", overlay, box.percent_of(self.width, self.height))
        x, y, width, height = box.pixels()
        await self.host.create_view(view, url=str(overlay.get("url", "")), x=x, y=y, width=max(1, width),
                                    height=max(1, height), z=OVERLAY_Z, visible=False,
                                    scripts=[{"source": self._script, "frames": "top"}])

    async def reveal_overlay(self, overlay_id: str) -> bool:
        view = self._view_of.get(overlay_id)
        if view is None:
            return False
        await self.host.request("show", viewId=view)
        return bool(await self.tv("revealOverlay", overlay_id))

    async def remove_overlay(self, overlay_id: str) -> None:
        await self._destroy_view(overlay_id)
        await self.tv("removeOverlay", overlay_id)

    async def post(self, overlay_id: str, message: Any) -> bool:
        view = self._view_of.get(overlay_id)
        if view is None:
            return False
        try:
            await self.host.run_js(view, "return await " + post_script(message), is_async=True, timeout=POST_TIMEOUT)
        except HostError as error:
            log.info("overlay %s: the posted message was not handled: %s", overlay_id, error)
        return True

    def load_timed_out(self, overlay_id: str, seconds: float) -> Optional[LoadOutcome]:
        return self._outcomes.timed_out(overlay_id, seconds)

    async def settle(self) -> None:
        listed = (await self.host.request("list-views"))["views"]
        views = [view["viewId"] for view in listed if view.get("visible")]
        await asyncio.gather(*(self._settle(view) for view in views), return_exceptions=True)

    async def _settle(self, view: str) -> None:
        await self.host.settle(view, SETTLE_QUIET_MS, TV_SETTLE_TIMEOUT if view == TV_VIEW else SETTLE_TIMEOUT)

    async def screenshot(self, path: Path) -> None:
        await self.host.screenshot(path)

    async def press(self, key: str) -> None:
        await self.host.key(key)

    async def click(self, x: float, y: float) -> None:
        """A click where the screen shows something: the host sends it to the topmost view painted
        there, so the TV page's latest paint must have reached the host first."""
        await self._settle(TV_VIEW)
        await self.host.click(min(self.width - 1, max(0, round(x))), min(self.height - 1, max(0, round(y))))

    # ---- the host's events ----

    def _on_event(self, event: dict[str, Any]) -> None:
        name, view = event.get("event"), event.get("viewId")
        if self.video.host_event(event):
            return
        if view == TV_VIEW:
            self._on_tv_event(str(name), event)
            return
        overlay_id = self._overlay_of.get(str(view))
        if overlay_id is None:
            return
        if name == "ios-message":
            self.on_bridge(overlay_id, str(event.get("body", "")))
        elif name == "load-finished":
            self._loaded(self._outcomes.outcome(overlay_id, "loaded"))
        elif name == "load-failed":
            self._loaded(self._outcomes.outcome(overlay_id, "failed", str(event.get("reason") or "failed")))
        elif name == "host-message":
            self._on_remote(overlay_id, event.get("body"))
        elif name == "web-process-terminated":
            log.warning("overlay %s: its web process ended (%s)", overlay_id, event.get("reason"))

    def _loaded(self, outcome: Optional[LoadOutcome]) -> None:
        if outcome is not None:
            self.on_loaded(outcome)

    def _on_tv_event(self, name: str, event: dict[str, Any]) -> None:
        if name == "load-started":
            url = str(event.get("url", ""))
            self._on_tv_page = self._is_tv_page(url)
            if not self._on_tv_page and self._ready.is_set():
                log.warning("the TV page left for %s: loading it again", url[:200])
                self._restore_soon()
        elif name == "tv-message":
            self._on_tv_report(event.get("body"))
        elif name == "web-process-terminated" and self._ready.is_set():
            log.error("the TV page's web process ended (%s): loading it again", event.get("reason"))
            self._on_tv_page = False
            self._restore_soon()
        elif name == "load-failed":
            log.error("the TV page did not load: %s", event.get("reason", ""))

    def _restore_soon(self) -> None:
        if self._restoring is None or self._restoring.done():
            self._restoring = self._later(self._restore())

    def _is_tv_page(self, url: str) -> bool:
        return urlsplit(url)._replace(query="", fragment="").geturl() == self._tv_document

    def _on_tv_report(self, body: Any) -> None:
        if not self._on_tv_page:
            return  # only the TV page speaks for the viewer
        try:
            report = json.loads(body) if isinstance(body, str) else None
        except ValueError:
            return
        if not isinstance(report, dict):
            return
        kind = report.get("event")
        if kind == "ready":
            self._ready.set()
        elif kind == "focus":
            self._focus(report.get("overlayId"))
        elif kind == "video":
            self.video.command(report)
        else:
            self.on_report(report)

    def _focus(self, overlay_id: Any) -> None:
        """The TV page moved the remote's focus: to an overlay's view, or (null) to itself."""
        view = self._view_of.get(overlay_id) if isinstance(overlay_id, str) else None
        replies = [self.host.send("focus", viewId=view or TV_VIEW)]
        if view is not None:
            replies.append(self.host.send("run-js", viewId=view, world="host",
                                          script="window.interactivedRemote && window.interactivedRemote.enter()"))
        for reply in replies:
            reply.add_done_callback(_log_refusal)

    def _on_remote(self, overlay_id: str, body: Any) -> None:
        """An overlay view's remote handed the focus back (Back, or an arrow with nothing beyond)."""
        try:
            message = json.loads(body) if isinstance(body, str) else None
        except ValueError:
            return
        if isinstance(message, dict) and message.get("kind") == "leave" and overlay_id not in self._leaving:
            self._leaving.add(overlay_id)  # one at a time
            self._later(self._hand_back_focus(overlay_id, str(message.get("reason", "back"))))

    async def _hand_back_focus(self, overlay_id: str, reason: str) -> None:
        try:
            await self.tv("focusOverlayWrapper", overlay_id, reason)
        except HostError as error:
            log.info("overlay %s: the focus could not go back to the TV page: %s", overlay_id, error)
        finally:
            self._leaving.discard(overlay_id)

    def _tell_video(self, news: dict[str, Any]) -> None:
        """The host's video news to the page, now (in the order told); none before the page is up
        (its ``open`` tells it the video's state)."""
        if not self._ready.is_set():
            return
        self.host.send("run-js", viewId=TV_VIEW, script=tv_call("hostVideo", (news,))).add_done_callback(_log_refusal)

    # ---- views ----

    async def _destroy_view(self, overlay_id: str) -> None:
        self._outcomes.forget(overlay_id)
        view = self._view_of.pop(overlay_id, None)
        if view is None:
            return
        self._overlay_of.pop(view, None)
        await self.host.request("destroy-view", viewId=view)

    async def _restore(self) -> None:
        """Loads the TV page again (its view had left it), empties the screen, lets the player redraw."""
        for overlay_id in list(self._view_of):
            await self._destroy_view(overlay_id)
        for attempt in range(1, RESTORE_ATTEMPTS + 1):
            self._ready.clear()
            try:
                await self.host.navigate(TV_VIEW, self._tv_document + "?overlays=views&video=host")
                await self._page_up()
            except (HostError, asyncio.TimeoutError) as error:
                log.warning("loading the TV page again (attempt %d): %s", attempt, str(error) or type(error).__name__)
                continue
            log.info("the TV page is back: redrawing it")
            self.on_restored()
            return
        log.error("the TV page could not be loaded again after %d attempts", RESTORE_ATTEMPTS)

    def _later(self, work: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def _log_refusal(reply: asyncio.Future[dict[str, Any]]) -> None:
    """A command the engine did not wait for: its refusal is logged."""
    if reply.cancelled():
        return
    error = reply.exception()
    if error is not None:
        log.info("%s", error)
    elif reply.result().get("event") in ("error", "js-error"):
        log.info("the host refused: %s", reply.result().get("message"))
