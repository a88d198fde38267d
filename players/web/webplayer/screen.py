"""The TV page in Chromium: the page's API (``window.tv``), overlay frames with the IOS shim,
what the page and the frames report, input and screenshots."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional
from urllib.parse import quote

from .cdp import CDPConnection, CDPError
from .frames import LoadOutcome, OverlayFrames

log = logging.getLogger(__name__)

PAGE_DIR = Path(__file__).resolve().parent / "page"
TV_BINDING = "__tvReport"
BRIDGE_BINDING = "__interactivedBridge"
READY_TIMEOUT = 20.0


def frame_script() -> str:
    """What runs first in every overlay frame: spatial navigation and the IOS shim, wrapped in
    one function so that they add nothing to the page's globals but the IOS object."""
    spatial = (PAGE_DIR / "spatial.js").read_text()
    shim = (PAGE_DIR / "shim.js").read_text()
    return "(function () {\n'use strict';\n" + spatial + "\n" + shim + "\n})();\n"


class Screen:
    """Drives the TV page over one DevTools connection.

    Callbacks (set by the player): ``on_loaded(LoadOutcome)``, ``on_bridge(overlay_id,
    message)`` for what a frame posted through IOS, ``on_report(dict)`` for what the TV page
    reported (viewer actions, video state).
    """

    def __init__(self, cdp: CDPConnection, width: int, height: int, emulate_size: bool) -> None:
        self.cdp = cdp
        self.width = width
        self.height = height
        self._emulate_size = emulate_size
        self.frames = OverlayFrames()
        self.session = ""
        self._main_frame = ""
        self._ready = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self.on_loaded: Callable[[LoadOutcome], None] = lambda outcome: None
        self.on_bridge: Callable[[str, str], None] = lambda overlay_id, message: None
        self.on_report: Callable[[dict[str, Any]], None] = lambda report: None

    async def open(self, video: Optional[Path]) -> None:
        """Attaches to the browser's page, installs the bindings and loads the TV page."""
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
        url = (PAGE_DIR / "tv.html").as_uri()
        if video is not None:
            url += "?video=" + quote(video.resolve().as_uri(), safe="")
        tree = await self.send("Page.getFrameTree")
        self._main_frame = tree["frameTree"]["frame"]["id"]
        await self.send("Page.navigate", {"url": url})
        await asyncio.wait_for(self._ready.wait(), READY_TIMEOUT)
        if not self._emulate_size:  # a window: the screen is what the window manager gave
            size = await self.send("Runtime.evaluate", {
                "expression": "[window.innerWidth, window.innerHeight]", "returnByValue": True})
            self.width, self.height = size["result"]["value"]

    async def send(self, method: str, params: Optional[dict[str, Any]] = None,
                   session: Optional[str] = None) -> dict[str, Any]:
        return await self.cdp.send(method, params, session or self.session)

    async def tv(self, function: str, *arguments: Any) -> Any:
        """Calls ``window.tv.<function>(...arguments)`` in the TV page; its value."""
        expression = f"window.tv.{function}({', '.join(json.dumps(a) for a in arguments)})"
        reply = await self.send("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise RuntimeError(f"tv.{function} failed: {reply['exceptionDetails'].get('text')}")
        return reply.get("result", {}).get("value")

    async def show_overlay(self, overlay: dict[str, Any]) -> None:
        self.frames.expect(overlay["overlayId"])
        await self.tv("showOverlay", overlay)

    async def remove_overlay(self, overlay_id: str) -> None:
        self.frames.forget(overlay_id)
        await self.tv("removeOverlay", overlay_id)

    async def post(self, overlay_id: str, message: Any) -> bool:
        """``window.postMessage(JSON.stringify(message), '*')`` inside the overlay's frame;
        returns once the page's message listeners ran (bounded), False without a frame."""
        session = self.frames.session_of(overlay_id)
        if session is None:
            return False
        text = json.dumps(json.dumps(message))
        expression = ("new Promise(function (done) {"
                      " window.addEventListener('message', function () { setTimeout(done, 0); }, {once: true});"
                      f" window.postMessage({text}, '*'); }})")
        try:
            await asyncio.wait_for(self.send("Runtime.evaluate", {
                "expression": expression, "awaitPromise": True}, session), 3)
        except asyncio.TimeoutError:
            log.info("overlay %s: the posted message was not handled within 3 s", overlay_id)
        return True

    async def settle(self) -> None:
        """Waits (at most 3 s) until the TV page painted twice: what changed is on screen."""
        try:
            await asyncio.wait_for(self.send("Runtime.evaluate", {
                "expression": "new Promise(function (done) { requestAnimationFrame(function () {"
                              " requestAnimationFrame(function () { done(true); }); }); })",
                "awaitPromise": True}), 3)
        except asyncio.TimeoutError:
            log.info("the TV page did not paint within 3 s")
        await asyncio.sleep(0.1)  # out-of-process frames reach the compositor a moment later

    async def screenshot(self, path: Path) -> None:
        """A PNG of the whole screen, written whole or not at all: a reader that sees the name
        (a test, the contact sheet) never reads a half-written file."""
        shot = await self.send("Page.captureScreenshot", {"format": "png"})
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

    def _later(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_event(self, method: str, params: dict[str, Any], session: Optional[str]) -> None:
        if method == "Target.attachedToTarget":
            self._later(self._prepare_target(params))
        elif method == "Target.detachedFromTarget":
            self.frames.session_detached(params.get("sessionId", ""))
        elif method == "Runtime.bindingCalled":
            self._on_binding(params, session)
        elif session == self.session:
            if method == "Network.responseReceived" and params.get("type") == "Document" \
                    and params.get("frameId") != self._main_frame:
                self.frames.document_response(params.get("frameId", ""),
                                              int(params.get("response", {}).get("status", 0)))
        elif method == "Page.frameNavigated" and session is not None:
            frame = params.get("frame", {})
            if frame.get("parentId") == self._main_frame:
                self.frames.frame_committed(session, frame.get("id", ""), frame.get("name", ""),
                                            frame.get("unreachableUrl"))
        elif method == "Page.loadEventFired" and session is not None:
            outcome = self.frames.frame_loaded(session)
            if outcome is not None:
                self.on_loaded(outcome)

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
        if params.get("name") == TV_BINDING and session == self.session:
            if payload.get("event") == "ready":
                self._ready.set()
            else:
                self.on_report(payload)
        elif params.get("name") == BRIDGE_BINDING:
            overlay_id = self.frames.overlay_of(session)
            if overlay_id is None:
                return
            if payload.get("kind") == "post" and isinstance(payload.get("message"), str):
                self.on_bridge(overlay_id, payload["message"])
            elif payload.get("kind") == "leave":
                self._later(self.tv("focusOverlayWrapper", overlay_id, str(payload.get("reason", "back"))))
