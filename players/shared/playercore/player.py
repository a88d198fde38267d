"""The player: interactived's events drawn by the engine, the TV page's reports and the overlays'
bridge posts sent back to the daemon (one call at a time, in order)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any, Optional

import interactived_client
from interactived_client import ConnectionClosed, DaemonError

from .autopilot import Autopilot
from .bridge_budget import BridgeBudget
from .engine import Engine
from .outcomes import LoadOutcome
from .placement import overlay_box
from .screenshots import Screenshots
from .sdk import VideoSDK
from .voice import VoicePanel

log = logging.getLogger("player")

EVENT_TYPES = ["overlay.", "player.controls", "predict.button", "login.required",
               "fanclub.required", "answer.", "playback.", "voice."]
SILENT_PAGE_TIMEOUT = 30.0
# What may go wrong drawing one event or one overlay (the page did not answer, or is being
# loaded again), with the engine's own errors: logged, and the next one is drawn.
DRAWING_ERRORS = (RuntimeError, ConnectionError, asyncio.TimeoutError, DaemonError)
Report = tuple[str, dict[str, Any], Optional[Callable[[], None]]]


class Player:
    """Keeps the screen across daemon connections: ``run(client)`` once per connection."""

    def __init__(self, engine: Engine, screenshots: Optional[Screenshots], load_timeout: float,
                 autopilot: bool, device: dict[str, str],
                 play_at_start: Optional[tuple[str, int]] = None,
                 silent_page_timeout: float = SILENT_PAGE_TIMEOUT) -> None:
        self.client: Optional[interactived_client.Client] = None
        self.engine = engine
        self.screenshots = screenshots
        self.load_timeout = load_timeout
        self.errors = DRAWING_ERRORS + engine.page_errors
        self.autopilot = Autopilot(engine) if autopilot else None
        self._outbox: asyncio.Queue[Report] = asyncio.Queue()
        self._bridge_budget = BridgeBudget()
        self._drawing = asyncio.Lock()  # one event (or the redraw of a reloaded TV page) at a time
        self._load_timers: dict[str, asyncio.Task[None]] = {}
        self._shown: set[str] = set()
        self._revealed: set[str] = set()
        self._endless: set[str] = set()  # durationSec 0: the daemon never expires them
        self._silence_timers: dict[str, asyncio.Task[None]] = {}
        self.silent_page_timeout = silent_page_timeout
        self._tasks: set[asyncio.Task[None]] = set()
        self._play_at_start = play_at_start
        self.video = VideoSDK(engine, device, self._report, self._screenshot, self.errors)
        self.voice = VoicePanel()
        engine.on_loaded = self._loaded
        engine.on_bridge = self._bridge
        engine.on_report = self._page_report
        engine.on_restored = lambda: self._later(self._redraw_reloaded_page())

    async def run(self, client: interactived_client.Client) -> None:
        """Subscribes, draws the snapshot, then follows the events until the daemon goes away
        (``ConnectionClosed``)."""
        self.client = client
        self._outbox = asyncio.Queue()
        self._bridge_budget.reset()
        sending = asyncio.get_running_loop().create_task(self._send_reports(client))
        checking = asyncio.get_running_loop().create_task(self.video.check_streams())
        try:
            await client.call("player.viewport", {"width": self.engine.width, "height": self.engine.height})
            self.video.connected(await client.call("config.get"))
            stream = client.events(types=EVENT_TYPES)
            await self._redraw(await stream.open())
            if self._play_at_start is not None:  # --play: once, on the first connection
                self.video.start(*self._play_at_start)
                self._play_at_start = None
            async for event in stream:
                overlay_id = event["data"].get("overlayId")
                async with self._drawing:
                    with self._contained(f"{event['type']}{f' of {overlay_id}' if overlay_id else ''}"):
                        await self._handle(event["type"], event["data"])
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
            if await self.engine.reveal_overlay(overlay_id):
                await self._screenshot("reveal", overlay_id)
                if self.autopilot:
                    self._later(self.autopilot.answer(overlay_id, lambda: overlay_id in self._shown))
        elif kind == "overlay.hide":
            self._forget(overlay_id)
            await self.engine.remove_overlay(overlay_id)
        elif kind == "overlay.post":
            message = data.get("message", {})
            if await self.engine.post(overlay_id, message):
                key = message.get("key", "message") if isinstance(message, dict) else "message"
                await self._screenshot(f"post-{key}", overlay_id)
        elif kind == "overlay.link":
            await self.engine.tv("toast", f"Sponsor link: {data.get('url', '')}", 6)
        elif kind == "player.controls":
            await self.engine.tv("setControls", bool(data.get("visible", True)))
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
            await self.engine.tv("toast", text, 4)
        elif kind.startswith("playback."):
            await self.video.handle(kind, data)
        elif kind.startswith("voice."):
            await self._voice_event(kind, data)
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
        await self.engine.show_overlay(data, overlay_box(data.get("placement"), self.engine.width,
                                                         self.engine.height))
        self._report("overlay.attached", {"overlayId": overlay_id})
        self._load_timers[overlay_id] = self._later(self._load_deadline(overlay_id))

    async def _load_deadline(self, overlay_id: str) -> None:
        await asyncio.sleep(self.load_timeout)
        outcome = self.engine.load_timed_out(overlay_id, self.load_timeout)
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
            self._later(self.engine.remove_overlay(outcome.overlay_id))
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
        note = self._bridge_budget.forget(overlay_id)
        if note:
            log.info("%s", note)
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
            with self._contained(f"the removal of {overlay_id}"):
                await self.engine.remove_overlay(overlay_id)
        for overlay_id, overlay in overlays.items():
            with self._contained(f"overlay {overlay_id}"):
                if overlay_id not in self._shown:
                    await self._show(overlay)
                if overlay.get("revealed"):
                    self._revealed.add(overlay_id)
                    await self.engine.reveal_overlay(overlay_id)
        for button in status.get("predict", []):
            if isinstance(button, dict):
                with self._contained(f"the button of {button.get('timelineId')}"):
                    await self._predict_button(button)
        playback = status.get("playback")
        if isinstance(playback, dict) and isinstance(playback.get("screen"), dict):
            with self._contained("the playback screen"):
                await self.video.show_state(playback["screen"])
        with self._contained("the voice panel"):
            self.voice.redraw(status.get("voice"))
            await self._draw_voice()

    async def _redraw_reloaded_page(self) -> None:
        """The TV page was loaded again (its main frame had left it): it is empty, so everything
        is drawn again from the daemon's snapshot."""
        async with self._drawing:
            for overlay_id in list(self._shown):
                self._forget(overlay_id)
            self.voice.page_reloaded()
            client = self.client
            if client is None or client.closed:
                return  # the next connection's snapshot draws it
            await self._redraw(await client.call("daemon.status", timeout=30))

    async def _voice_event(self, kind: str, data: dict[str, Any]) -> None:
        """A ``voice.*`` event: the panel and the programme's volume follow; the participants are
        read again when the event says there are others than the panel lists."""
        if kind == "voice.state":
            log.info("voice room %s: %s%s", data.get("room"), data.get("state"),
                     f" ({data['reason']})" if data.get("reason") else "")
        shown = self.voice.shown
        talkers = set(self.voice.talkers())
        if self.voice.apply(kind, data) and self.client is not None:
            self.voice.redraw((await self.client.call("daemon.status", timeout=30)).get("voice"))
        await self._draw_voice()
        room = self.voice.room
        if room is not None and self.voice.shown and not shown:
            await self._screenshot("voice-joined", room.room)
        for peer_id in sorted(set(self.voice.talkers()) - talkers):
            await self._screenshot("voice-talking", peer_id)

    async def _draw_voice(self) -> None:
        await self.engine.tv("setVoice", self.voice.view())
        change = self.voice.volume_change()
        if change is not None:
            await self.engine.tv("setProgrammeVolume", change.level, change.ramp_ms, change.delay_ms)

    async def _toggle_mute(self) -> None:
        """The mute key: ``voice.mute`` the other way round, and the panel redrawn with the answer."""
        params = self.voice.mute_request()
        client = self.client
        if params is None or client is None:
            return
        log.info("voice: %s", "muting" if params["muted"] else "unmuting")
        result = await client.call("voice.mute", params, timeout=30)
        async with self._drawing:
            self.voice.muted(result)
            await self._draw_voice()

    async def _predict_button(self, data: dict[str, Any]) -> None:
        await self.engine.tv("setPredictButton", data)
        if self.autopilot and self.autopilot.should_tap(data):
            self._later(self.autopilot.tap(str(data.get("timelineId", ""))))

    async def _dialog(self, what: str, overlay_id: str, spec: dict[str, Any]) -> None:
        await self.engine.tv("showDialog", spec)
        await self._screenshot(f"dialog-{what}", overlay_id)
        if self.autopilot:
            self._later(self.autopilot.dialog(what))

    async def _screenshot(self, what: str, overlay_id: str) -> None:
        if self.screenshots is None:
            return
        await self.engine.settle()
        path = self.screenshots.next_path(what, overlay_id)
        await self.engine.screenshot(path)
        log.info("screenshot %s", path)

    def _page_report(self, report: dict[str, Any]) -> None:
        if self.video.page_report(report):
            return
        if report.get("event") == "player.state":
            self._report("player.state", {"state": report.get("state", "playing")})
        elif report.get("event") == "action" and report.get("name") == "voice.mute":
            self._later(self._toggle_mute())
        elif report.get("event") == "action" and report.get("name") in (
                "predict.open", "answer.confirm", "overlay.dismiss"):
            self._report(str(report["name"]), dict(report.get("data") or {}))

    def _report(self, method: str, params: dict[str, Any],
                answered: Optional[Callable[[], None]] = None) -> None:
        """Queues a call to the daemon; they go out one at a time, in order. ``answered`` runs
        once the daemon answered it (or the call failed)."""
        self._outbox.put_nowait((method, params, answered))

    def _bridge(self, overlay_id: str, message: str) -> None:
        """What an overlay's page posted: ``overlay.bridge``, within the overlay's budget."""
        size = len(message.encode("utf-8", "surrogatepass"))
        send, note = self._bridge_budget.admit(overlay_id, size)
        if note:
            log.warning("%s", note)
        if send:
            self._report("overlay.bridge", {"overlayId": overlay_id, "message": message},
                         lambda: self._bridge_budget.answered(overlay_id, size))

    async def _send_reports(self, client: interactived_client.Client) -> None:
        while True:
            method, params, answered = await self._outbox.get()
            try:
                await client.call(method, params, timeout=30)
            except DaemonError as error:
                log.info("%s %s: %s", method, params.get("overlayId", ""), error)
            except ConnectionClosed:
                return
            except asyncio.TimeoutError:
                log.warning("%s: no reply within 30 s", method)
            except ValueError as error:  # what JSON cannot carry (a page's lone surrogate): not sent
                log.warning("%s %s not sent: %s", method, params.get("overlayId", ""), error)
            finally:
                if answered is not None:
                    answered()

    def _later(self, work: Any) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:  # a bug gets its traceback
            log.warning("%s", str(error) or type(error).__name__,
                        exc_info=None if isinstance(error, self.errors) else error)

    @contextlib.contextmanager
    def _contained(self, what: str) -> Iterator[None]:
        """Logs what goes wrong drawing ``what`` and goes on; only the daemon's going away passes."""
        try:
            yield
        except ConnectionClosed:
            raise
        except self.errors as error:
            log.warning("%s not drawn: %s", what, str(error) or type(error).__name__)
        except Exception:  # a bug met by one overlay must not stop the next
            log.exception("%s not drawn", what)
