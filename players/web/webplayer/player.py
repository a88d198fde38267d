"""The player: interactived's events drawn on the TV page, the page's reports sent back."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from typing import Any, Optional

import interactived_client
from interactived_client import ConnectionClosed, DaemonError

from .cdp import CDPError
from .frames import LoadOutcome
from .screen import Screen
from .sdk import VideoSDK

log = logging.getLogger("player")

EVENT_TYPES = ["overlay.", "player.controls", "predict.button", "login.required",
               "fanclub.required", "answer.", "playback."]
AUTOPILOT_DELAY = 1.0
SILENT_PAGE_TIMEOUT = 30.0


class Screenshots:
    """PNGs named ``NNNN-what-overlayId.png`` so that they sort in the order they were taken."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def next_path(self, what: str, overlay_id: str) -> Path:
        self.count += 1
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{what}-{overlay_id}")
        return self.directory / f"{self.count:04d}-{safe}.png"


class WebPlayer:
    """Keeps the screen across daemon connections: ``run(client)`` once per connection."""

    def __init__(self, screen: Screen, screenshots: Optional[Screenshots], load_timeout: float,
                 autopilot: bool, device: dict[str, str],
                 play_at_start: Optional[tuple[str, int]] = None,
                 silent_page_timeout: float = SILENT_PAGE_TIMEOUT) -> None:
        self.client: Optional[interactived_client.Client] = None
        self.screen = screen
        self.screenshots = screenshots
        self.load_timeout = load_timeout
        self.autopilot = autopilot
        self._outbox: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self._load_timers: dict[str, asyncio.Task[None]] = {}
        self._shown: set[str] = set()
        self._revealed: set[str] = set()
        self._endless: set[str] = set()  # durationSec 0: the daemon never expires them
        self._silence_timers: dict[str, asyncio.Task[None]] = {}
        self.silent_page_timeout = silent_page_timeout
        self._tapped: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._play_at_start = play_at_start
        self.video = VideoSDK(screen, device, self._report, self._screenshot)
        screen.on_loaded = self._loaded
        screen.on_bridge = lambda overlay_id, message: self._report(
            "overlay.bridge", {"overlayId": overlay_id, "message": message})
        screen.on_report = self._page_report

    async def run(self, client: interactived_client.Client) -> None:
        """Subscribes, draws the snapshot, then follows the events until the daemon goes away
        (``ConnectionClosed``)."""
        self.client = client
        self._outbox = asyncio.Queue()
        sending = asyncio.get_running_loop().create_task(self._send_reports(client))
        checking = asyncio.get_running_loop().create_task(self.video.check_streams())
        try:
            await client.call("player.viewport", {"width": self.screen.width, "height": self.screen.height})
            self.video.connected(await client.call("config.get"))
            stream = client.events(types=EVENT_TYPES)
            await self._redraw(await stream.open())
            if self._play_at_start is not None:  # --play: once, on the first connection
                self.video.start(*self._play_at_start)
                self._play_at_start = None
            async for event in stream:
                try:
                    await self._handle(event["type"], event["data"])
                except (CDPError, RuntimeError, asyncio.TimeoutError) as error:
                    # One event the page could not draw must not stop the player.
                    log.warning("%s not drawn: %s", event["type"], error)
        finally:
            sending.cancel()
            checking.cancel()
            for task in [*self._load_timers.values(), *self._silence_timers.values(), *self._tasks]:
                task.cancel()

    async def _handle(self, kind: str, data: dict[str, Any]) -> None:
        overlay_id = str(data.get("overlayId", ""))
        if kind == "overlay.show":
            await self._show(data)
        elif kind == "overlay.reveal":
            self._revealed.add(overlay_id)
            if await self.screen.tv("revealOverlay", overlay_id):
                await self._screenshot("reveal", overlay_id)
                if self.autopilot:
                    self._later(self._autopilot_answer(overlay_id))
        elif kind == "overlay.hide":
            self._forget(overlay_id)
            await self.screen.remove_overlay(overlay_id)
        elif kind == "overlay.post":
            message = data.get("message", {})
            if await self.screen.post(overlay_id, message):
                key = message.get("key", "message") if isinstance(message, dict) else "message"
                await self._screenshot(f"post-{key}", overlay_id)
        elif kind == "overlay.link":
            await self.screen.tv("toast", f"Sponsor link: {data.get('url', '')}", 6)
        elif kind == "player.controls":
            await self.screen.tv("setControls", bool(data.get("visible", True)))
        elif kind == "predict.button":
            await self._predict_button(data)
        elif kind == "login.required":
            await self._dialog("login", overlay_id, {
                "title": "Log in to answer", "text": "Sign in with your account to take part."})
        elif kind == "fanclub.required":
            await self._dialog("fanclub", overlay_id, {
                "title": "Fan club members only", "text": "Join the fan club to answer this one."})
        elif kind == "answer.confirm":
            accept = {"name": "answer.confirm", "data": {"overlayId": overlay_id, "accept": True}}
            decline = {"name": "answer.confirm", "data": {"overlayId": overlay_id, "accept": False}}
            await self._dialog("confirm", overlay_id, {
                "title": "Confirm your answer",
                "text": f"This answer costs {data.get('amount', 0)} points. Go ahead?",
                "buttons": [{"label": "Yes", "action": accept}, {"label": "No", "action": decline}],
                "focus": 1, "cancel": decline})  # "No" first: the viewer spends only by choosing to
        elif kind == "answer.result":
            text = "Answer accepted \u2713" if data.get("status") == "success" \
                else f"Answer not accepted ({data.get('reason', 'failure')})"
            await self.screen.tv("toast", text, 4)
        elif kind.startswith("playback."):
            await self.video.handle(kind, data)
        elif kind == "events.lagged":
            log.info("missed %s events: redrawing from daemon.status", data.get("missed"))
            await self._redraw(await self.client.call("daemon.status") if self.client else {})

    async def _show(self, data: dict[str, Any]) -> None:
        overlay_id = str(data["overlayId"])
        log.info("overlay %s (%s) at location %s: %s", overlay_id, data.get("kind"),
                 data.get("placement", {}).get("location"), data.get("url"))
        self._shown.add(overlay_id)
        if data.get("durationSec") == 0:
            self._endless.add(overlay_id)
        await self.screen.show_overlay(data)
        self._report("overlay.attached", {"overlayId": overlay_id})
        self._load_timers[overlay_id] = self._later(self._load_deadline(overlay_id))

    async def _load_deadline(self, overlay_id: str) -> None:
        await asyncio.sleep(self.load_timeout)
        outcome = self.screen.frames.timed_out(overlay_id, self.load_timeout)
        if outcome is not None:
            self._loaded(outcome)

    def _loaded(self, outcome: LoadOutcome) -> None:
        timer = self._load_timers.pop(outcome.overlay_id, None)
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()
        params: dict[str, Any] = {"overlayId": outcome.overlay_id, "status": outcome.status}
        if outcome.reason:
            params["reason"] = outcome.reason
        log.info("overlay %s %s%s", outcome.overlay_id, outcome.status,
                 f": {outcome.reason}" if outcome.reason else "")
        self._report("overlay.rendered", params)
        if outcome.status == "failed":  # docs/players.md: destroy the view, dismiss the overlay
            self._forget(outcome.overlay_id)
            self._later(self.screen.remove_overlay(outcome.overlay_id))
            self._report("overlay.dismiss", {"overlayId": outcome.overlay_id})
        elif outcome.overlay_id in self._endless and outcome.overlay_id not in self._revealed:
            self._silence_timers[outcome.overlay_id] = self._later(self._silence_deadline(outcome.overlay_id))

    async def _silence_deadline(self, overlay_id: str) -> None:
        """docs/players.md, section 6: a loaded page that never expires and never said it is
        ready is dismissed after a while, so that a stuck page does not hold memory."""
        await asyncio.sleep(self.silent_page_timeout)
        self._silence_timers.pop(overlay_id, None)
        if overlay_id in self._shown and overlay_id not in self._revealed:
            log.info("overlay %s loaded %g s ago and never said it is ready: dismissing it",
                     overlay_id, self.silent_page_timeout)
            self._report("overlay.dismiss", {"overlayId": overlay_id})

    def _forget(self, overlay_id: str) -> None:
        self._shown.discard(overlay_id)
        self._revealed.discard(overlay_id)
        self._endless.discard(overlay_id)
        for timers in (self._load_timers, self._silence_timers):
            timer = timers.pop(overlay_id, None)
            if timer is not None and timer is not asyncio.current_task():
                timer.cancel()

    async def _redraw(self, status: dict[str, Any]) -> None:
        """Makes the screen match a ``daemon.status`` (at start and after ``events.lagged``)."""
        overlays = {str(o.get("overlayId")): o for o in status.get("overlays", []) if isinstance(o, dict)}
        for overlay_id in list(self._shown - overlays.keys()):
            self._forget(overlay_id)
            await self.screen.remove_overlay(overlay_id)
        for overlay_id, overlay in overlays.items():
            if overlay_id not in self._shown:
                await self._show(overlay)
            if overlay.get("revealed"):
                self._revealed.add(overlay_id)
                await self.screen.tv("revealOverlay", overlay_id)
        for button in status.get("predict", []):
            if isinstance(button, dict):
                await self._predict_button(button)
        playback = status.get("playback")
        if isinstance(playback, dict) and isinstance(playback.get("screen"), dict):
            await self.video.show_state(playback["screen"])

    async def _predict_button(self, data: dict[str, Any]) -> None:
        await self.screen.tv("setPredictButton", data)
        timeline = str(data.get("timelineId", ""))
        if self.autopilot and data.get("visible") and data.get("image") == "power" \
                and timeline not in self._tapped:
            self._tapped.add(timeline)
            self._later(self._autopilot_tap(timeline))

    async def _dialog(self, what: str, overlay_id: str, spec: dict[str, Any]) -> None:
        await self.screen.tv("showDialog", spec)
        await self._screenshot(f"dialog-{what}", overlay_id)
        if self.autopilot:  # the demo viewer says Yes to a bet: left from "No", then Enter
            self._later(self._autopilot_key(*(["ArrowLeft"] if what == "confirm" else []), "Enter"))

    async def _screenshot(self, what: str, overlay_id: str) -> None:
        if self.screenshots is None:
            return
        await self.screen.settle()
        path = self.screenshots.next_path(what, overlay_id)
        await self.screen.screenshot(path)
        log.info("screenshot %s", path)

    def _page_report(self, report: dict[str, Any]) -> None:
        if self.video.page_report(report):
            return
        if report.get("event") == "player.state":
            self._report("player.state", {"state": report.get("state", "playing")})
        elif report.get("event") == "action" and report.get("name") in (
                "predict.open", "answer.confirm", "overlay.dismiss"):
            self._report(str(report["name"]), dict(report.get("data") or {}))

    def _report(self, method: str, params: dict[str, Any]) -> None:
        """Queues a call to the daemon; they go out one at a time, in order."""
        self._outbox.put_nowait((method, params))

    async def _send_reports(self, client: interactived_client.Client) -> None:
        while True:
            method, params = await self._outbox.get()
            try:
                await client.call(method, params, timeout=30)
            except DaemonError as error:
                log.info("%s %s: %s", method, params.get("overlayId", ""), error)
            except ConnectionClosed:
                return
            except asyncio.TimeoutError:
                log.warning("%s: no reply within 30 s", method)

    def _later(self, work: Any) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _autopilot_answer(self, overlay_id: str) -> None:
        """Demo viewer: a few seconds after a reveal, Enter on what has the focus."""
        await asyncio.sleep(AUTOPILOT_DELAY)
        if overlay_id in self._shown:
            await self.screen.press("Enter")

    async def _autopilot_key(self, *keys: str) -> None:
        for key in keys:
            await asyncio.sleep(AUTOPILOT_DELAY / 2)
            await self.screen.press(key)

    async def _autopilot_tap(self, timeline: str) -> None:
        """Demo viewer: taps a lit predict/lucky button with the mouse."""
        await asyncio.sleep(AUTOPILOT_DELAY / 2)
        box = await self.screen.tv("buttonBox", timeline)
        if box:
            await self.screen.click(box[0] + box[2] / 2, box[1] + box[3] / 2)
