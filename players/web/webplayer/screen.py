"""The Chromium engine of the reference player (playercore.engine.Engine): the TV page's API
(``window.tv``), overlay frames with the IOS shim, what the page and the frames report, input
and screenshots, over the DevTools protocol.

Only the TV page speaks for the viewer: its binding ``__tvReport`` is heard from the default
execution context of the page's main frame while that frame holds the TV page (a ``file:``
document), and from nothing else; should the main frame ever hold another document, the TV page
is loaded again and the player redraws it from the daemon's snapshot.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import math
from pathlib import Path
from typing import Any, Optional
from urllib.parse import quote, urlsplit

from playercore.engine import PAGE_DIR, Engine, post_script, tv_call
from playercore.outcomes import LoadOutcome
from playercore.placement import Box

from .cdp import CDPConnection, CDPError
from .frames import OverlayFrames

log = logging.getLogger(__name__)

# The Chromium part of what runs in overlay frames (with PAGE_DIR's spatial.js and overlay-remote.js).
SHIM = Path(__file__).resolve().parent / "page" / "shim.js"
TV_BINDING = "__tvReport"
BRIDGE_BINDING = "__interactivedBridge"
READY_TIMEOUT = 20.0
# How long the page may take for one call (a seek takes up to 3 s) and for a screenshot: what
# waits behind them (the next event, the redraw of a reloaded TV page) waits at most that long.
CALL_TIMEOUT = 10.0
SCREENSHOT_TIMEOUT = 5.0
RESTORE_ATTEMPTS = 3
# How Chromium writes the origin of file: documents (Runtime.ExecutionContextDescription.origin).
FILE_ORIGIN = "file://"


def frame_script() -> str:
    """What runs first in every overlay frame: spatial navigation, the IOS shim and the remote,
    wrapped in one function so that they add nothing to the page's globals but the IOS object."""
    parts = [(PAGE_DIR / "spatial.js").read_text(), SHIM.read_text(), (PAGE_DIR / "overlay-remote.js").read_text()]
    return "(function () {\n'use strict';\n" + "\n".join(parts) + "\n})();\n"


class Screen(Engine):
    """Drives the TV page over one DevTools connection."""

    page_errors = (CDPError,)

    def __init__(self, cdp: CDPConnection, width: int, height: int, emulate_size: bool) -> None:
        super().__init__(width, height)
        self.cdp = cdp
        self._emulate_size = emulate_size
        self.frames = OverlayFrames()
        self.session = ""
        self._main_frame = ""
        self._tv_url = ""  # what the main frame loads: tv.html?video=...
        self._tv_document = ""  # tv.html's file: URL, to which the main frame's URL is compared
        self._on_tv_page = False  # the main frame's last commit was the TV page
        self._tv_context: Optional[int] = None  # the TV page's default execution context
        self._ignored_reports = 0
        self._restoring: Optional[asyncio.Task[None]] = None
        self._leaving: set[str] = set()  # overlays whose frame is handing the focus back
        self._ready = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()

    async def open(self, tv_page: Path, video: Optional[Path]) -> None:
        """Attaches to the browser's page, installs the bindings and loads the TV page
        (``tv_page``, a copy of PAGE_DIR's TV_PAGE_FILES the browser can read)."""
        self.cdp.on_event(self._on_event)
        targets = (await self.cdp.send("Target.getTargets"))["targetInfos"]
        page = next(target for target in targets if target["type"] == "page")
        self.session = (await self.cdp.send(
            "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}))["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Network.enable"):
            await self.send(domain)
        if self._emulate_size:  # headless: the screen is exactly width x height, and focused
            await self.send("Emulation.setDeviceMetricsOverride", {
                "width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})
            await self.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
        await self.send("Runtime.addBinding", {"name": TV_BINDING})
        await self.send("Target.setAutoAttach", {
            "autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True})
        self._tv_document = tv_page.resolve().as_uri()
        self._tv_url = self._tv_document
        if video is not None:
            self._tv_url += "?video=" + quote(video.resolve().as_uri(), safe="")
        tree = await self.send("Page.getFrameTree")
        self._main_frame = tree["frameTree"]["frame"]["id"]
        await self.send("Page.navigate", {"url": self._tv_url})
        async with asyncio.timeout(READY_TIMEOUT):
            await self._ready.wait()
        if not self._emulate_size:  # a window: the screen is what the window manager gave
            size = await self.send("Runtime.evaluate", {
                "expression": "[window.innerWidth, window.innerHeight]", "returnByValue": True})
            self.width, self.height = size["result"]["value"]

    async def send(self, method: str, params: Optional[dict[str, Any]] = None,
                   session: Optional[str] = None, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        return await self.cdp.send(method, params, session or self.session, timeout)

    async def tv(self, function: str, *arguments: Any) -> Any:
        """Calls ``window.tv.<function>(...arguments)`` in the TV page; its value."""
        reply = await self.send("Runtime.evaluate", {
            "expression": tv_call(function, arguments), "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise RuntimeError(f"tv.{function} failed: {reply['exceptionDetails'].get('text')}")
        return reply.get("result", {}).get("value")

    async def show_overlay(self, overlay: dict[str, Any], box: Box) -> None:
        self.frames.expect(overlay["overlayId"])
        await self.tv("showOverlay", overlay, box.percent_of(self.width, self.height))

    async def reveal_overlay(self, overlay_id: str) -> bool:
        return bool(await self.tv("revealOverlay", overlay_id))

    def load_timed_out(self, overlay_id: str, seconds: float) -> Optional[LoadOutcome]:
        return self.frames.timed_out(overlay_id, seconds)

    async def remove_overlay(self, overlay_id: str) -> None:
        self.frames.forget(overlay_id)
        await self.tv("removeOverlay", overlay_id)

    async def post(self, overlay_id: str, message: Any) -> bool:
        """``window.postMessage(JSON.stringify(message), '*')`` inside the overlay's frame;
        returns once the page's message listeners ran (bounded), False without a frame."""
        session = self.frames.session_of(overlay_id)
        if session is None:
            return False
        try:
            async with asyncio.timeout(3):
                await self.send("Runtime.evaluate", {"expression": post_script(message), "awaitPromise": True}, session)
        except asyncio.TimeoutError:
            log.info("overlay %s: the posted message was not handled within 3 s", overlay_id)
        return True

    async def settle(self) -> None:
        """Waits (at most 3 s) until the TV page painted twice: what changed is on screen."""
        try:
            async with asyncio.timeout(3):
                await self.send("Runtime.evaluate", {
                    "expression": "new Promise(function (done) { requestAnimationFrame(function () {"
                                  " requestAnimationFrame(function () { done(true); }); }); })",
                    "awaitPromise": True})
        except asyncio.TimeoutError:
            log.info("the TV page did not paint within 3 s")
        await asyncio.sleep(0.1)  # out-of-process frames reach the compositor a moment later

    async def screenshot(self, path: Path) -> None:
        """A PNG of the whole screen, written whole or not at all: a reader that sees the name
        (a test, the contact sheet) never reads a half-written file."""
        shot = await self.send("Page.captureScreenshot", {"format": "png"}, timeout=SCREENSHOT_TIMEOUT)
        partial = path.with_name(path.name + ".partial")
        partial.write_bytes(base64.b64decode(shot["data"]))
        partial.replace(path)

    async def press(self, key: str) -> None:
        """A remote key as real keyboard input (to whatever frame has the focus)."""
        codes = {"Enter": 13, "Escape": 27, "Backspace": 8, "ArrowLeft": 37, "ArrowUp": 38,
                 "ArrowRight": 39, "ArrowDown": 40}
        params: dict[str, Any] = {"key": key, "code": key, "windowsVirtualKeyCode": codes.get(key, 0)}
        if key == "Enter":
            params["text"] = "\r"
        await self.send("Input.dispatchKeyEvent", {"type": "keyDown", **params})
        await self.send("Input.dispatchKeyEvent", {"type": "keyUp", **params})

    async def click(self, x: float, y: float) -> None:
        """A real mouse click at a point of the screen."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            await self.send("Input.dispatchMouseEvent", {
                "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def _later(self, work: Any) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _on_event(self, method: str, params: dict[str, Any], session: Optional[str]) -> None:
        if method == "Target.attachedToTarget":
            self._later(self._prepare_target(params))
        elif method == "Target.detachedFromTarget":
            self.frames.session_detached(params.get("sessionId", ""))
        elif method == "Runtime.bindingCalled":
            self._on_binding(params, session)
        elif session == self.session:
            self._on_tv_page_event(method, params)
        elif method == "Page.frameNavigated" and session is not None:
            frame = params.get("frame", {})
            if frame.get("parentId") == self._main_frame:
                self.frames.frame_committed(session, frame.get("id", ""), frame.get("name", ""),
                                            frame.get("unreachableUrl"))
        elif method == "Page.loadEventFired" and session is not None:
            outcome = self.frames.frame_loaded(session)
            if outcome is not None:
                self.on_loaded(outcome)

    def _on_tv_page_event(self, method: str, params: dict[str, Any]) -> None:
        """An event of the page target: its main frame's documents and execution contexts, and the
        overlay frames' navigation requests (which the parent's session sees)."""
        if method == "Network.responseReceived" and params.get("type") == "Document" \
                and params.get("frameId") != self._main_frame:
            self.frames.document_response(params.get("frameId", ""),
                                          int(params.get("response", {}).get("status", 0)))
        elif method == "Page.frameNavigated" and params.get("frame", {}).get("id") == self._main_frame:
            url = str(params["frame"].get("url", ""))
            self._on_tv_page = bool(self._tv_document) and self._is_tv_page(url)
            if self._tv_document and not self._on_tv_page:
                log.warning("the TV page left for %s: loading it again", url[:200])
                if self._restoring is None or self._restoring.done():
                    self._restoring = self._later(self._restore())
        elif method == "Runtime.executionContextCreated":
            context = params.get("context", {})
            details = context.get("auxData") or {}
            if details.get("frameId") == self._main_frame and details.get("isDefault") is True \
                    and context.get("origin") == FILE_ORIGIN:
                self._tv_context = context.get("id")
        elif method == "Runtime.executionContextDestroyed":
            if params.get("executionContextId") == self._tv_context:
                self._tv_context = None
        elif method == "Runtime.executionContextsCleared":
            self._tv_context = None

    def _is_tv_page(self, url: str) -> bool:
        parts = urlsplit(url)
        return parts._replace(query="", fragment="").geturl() == self._tv_document

    async def _restore(self) -> None:
        """Loads the TV page again (the main frame left it), then lets the player redraw it."""
        for attempt in range(1, RESTORE_ATTEMPTS + 1):
            self._ready.clear()
            self.frames.reset()
            try:
                await self.send("Page.navigate", {"url": self._tv_url})
                async with asyncio.timeout(READY_TIMEOUT):
                    await self._ready.wait()
            except (CDPError, ConnectionError, asyncio.TimeoutError) as error:
                log.warning("loading the TV page again (attempt %d): %s", attempt, str(error) or type(error).__name__)
                continue
            if self._on_tv_page:
                log.info("the TV page is back: redrawing it")
                self.on_restored()
                return
        log.error("the TV page could not be loaded again after %d attempts", RESTORE_ATTEMPTS)

    async def _prepare_target(self, params: dict[str, Any]) -> None:
        """A new frame target, paused before its first script: install the shim, resume it."""
        session = params["sessionId"]
        try:
            if params.get("targetInfo", {}).get("type") == "iframe":
                for domain in ("Runtime.enable", "Page.enable"):
                    await self.send(domain, session=session)
                await self.send("Runtime.addBinding", {"name": BRIDGE_BINDING}, session)
                if self._emulate_size:
                    await self.send("Emulation.setFocusEmulationEnabled", {"enabled": True}, session)
                await self.send("Page.addScriptToEvaluateOnNewDocument",
                                {"source": frame_script()}, session)
            await self.send("Runtime.runIfWaitingForDebugger", session=session)
        except (CDPError, ConnectionError, asyncio.TimeoutError) as error:
            log.info("a frame target went away while being prepared: %s", error)

    def _on_binding(self, params: dict[str, Any], session: Optional[str]) -> None:
        try:
            payload = json.loads(params.get("payload", ""))
        except ValueError:
            return
        if not isinstance(payload, dict):
            return
        if params.get("name") == TV_BINDING:
            if session != self.session or not self._on_tv_page or self._tv_context is None \
                    or params.get("executionContextId") != self._tv_context:
                self._ignored_reports += 1
                if math.log10(self._ignored_reports).is_integer():  # the 1st, 10th, 100th, ...
                    log.warning("ignored __tvReport calls from a page that is not the TV page (%d so far)",
                                self._ignored_reports)
            elif payload.get("event") == "ready":
                self._ready.set()
            else:
                self.on_report(payload)
        elif params.get("name") == BRIDGE_BINDING:
            overlay_id = self.frames.overlay_of(session)
            if overlay_id is None:
                return
            if payload.get("kind") == "post" and isinstance(payload.get("message"), str):
                self.on_bridge(overlay_id, payload["message"])
            elif payload.get("kind") == "leave" and overlay_id not in self._leaving:
                self._leaving.add(overlay_id)  # one at a time: a page may send thousands
                self._later(self._hand_back_focus(overlay_id, str(payload.get("reason", "back"))))

    async def _hand_back_focus(self, overlay_id: str, reason: str) -> None:
        """A frame gave the remote's focus back (Back, or an arrow with nothing beyond)."""
        try:
            await self.tv("focusOverlayWrapper", overlay_id, reason)
        except (CDPError, RuntimeError, ConnectionError, asyncio.TimeoutError) as error:
            log.info("overlay %s: the focus could not go back to the TV page: %s", overlay_id, error)
        finally:
            self._leaving.discard(overlay_id)
