"""Helpers for the reference player's browser tests: the player as a subprocess, a second
DevTools client that plays the remote control and reads the TV page, a server of fixture
pages, and bounded waiting."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional, TypeVar

PLAYER_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = PLAYER_DIR.parents[1]
START_TIMEOUT = 60.0
T = TypeVar("T")

from tools.testsupport.processes import stop_process  # noqa: E402  (conftest puts the repository on sys.path)
from webplayer.cdp import CDPConnection  # noqa: E402  (conftest puts players/web on sys.path)
from webplayer.screen import Screen  # noqa: E402


async def eventually(probe: Callable[[], Awaitable[Optional[T]]], what: str, timeout: float = 15.0) -> T:
    """Calls ``probe`` every 100 ms until it returns something other than None or False."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        await asyncio.sleep(0.1)


async def next_event(stream: Any, kind: str, overlay_id: Optional[str] = None, timeout: float = 20.0) -> dict[str, Any]:
    """The data of the next event of ``kind`` (for ``overlay_id``) on a client's event stream."""
    async def find():
        async for event in stream:
            if event["type"] == kind and overlay_id in (None, event["data"].get("overlayId")):
                return event["data"]
        raise AssertionError(f"the stream ended before {kind}")
    return await asyncio.wait_for(find(), timeout)


async def emit_overlay(backend: Any, spec: dict[str, Any], tracked: bool = True) -> None:
    """``POST /_admin/emit`` of an overlay to the room m1 (tracked: a fresh tracking id)."""
    body = {"event": "overlay", "room": "m1", "overlay": spec}
    if tracked:
        body["trackingId"] = "auto"
    await asyncio.to_thread(backend.admin_sync, "emit", body)


class PlayerProcess:
    """``players/web/player --headless`` on the daemon's socket, its profile under ``tmp``."""

    def __init__(self, socket_path: str, tmp: Path, extra: tuple[str, ...] = ()) -> None:
        self.tmp = tmp
        self.screenshots = tmp / "screenshots"
        self.url_file = tmp / "devtools-url"
        self.log_path = tmp / "player.log"
        self._log = self.log_path.open("wb")
        environment = dict(os.environ)
        environment.pop("DISPLAY", None)
        self.process = subprocess.Popen(
            [sys.executable, str(PLAYER_DIR / "player"), "--socket", socket_path, "--headless",
             "--screenshot-dir", str(self.screenshots), "--devtools-url-file", str(self.url_file),
             *extra], stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            env=environment)

    def wait_started(self) -> str:
        """The browser's DevTools URL, once the TV page is up."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the player exited with {self.process.returncode}:\n{self.log()}")
            if self.url_file.exists() and self.url_file.read_text().strip():
                return self.url_file.read_text().strip()
            time.sleep(0.1)
        raise RuntimeError(f"the player did not start within {START_TIMEOUT}s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def screenshot(self, overlay_id: str, what: str) -> Optional[Path]:
        """The last screenshot taken for ``what`` (``reveal``, ``post-KEY``, ``playback-play``) of
        an overlay (or a vid), if any."""
        names = self.screenshots_of(overlay_id, what)
        return names[-1] if names else None

    def screenshots_of(self, overlay_id: str, what: str) -> list[Path]:
        """Every screenshot taken for ``what`` of an overlay (or a vid), in the order taken."""
        if not self.screenshots.exists():
            return []
        return sorted(p for p in self.screenshots.iterdir() if p.name.endswith(f"-{what}-{overlay_id}.png"))

    def stop(self, timeout: float = 20.0) -> Optional[int]:
        """SIGTERM and a bounded wait (then SIGKILL); the exit status."""
        status = stop_process(self.process, timeout)
        self._log.close()
        return status

    async def browser_processes(self) -> list[int]:
        """The browser's processes (browser, renderers, GPU, utilities) as DevTools lists them."""
        cdp = await CDPConnection.open(self.url_file.read_text().strip())
        try:
            info = await cdp.send("SystemInfo.getProcessInfo")
        finally:
            await cdp.close()
        return [int(process["id"]) for process in info["processInfo"]]


def alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` that still run (zombies count as gone)."""
    running = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            running.append(pid)
    return running


class Remote:
    """The test's own DevTools session on the TV page: real key and mouse input, the page's
    state, the browser's targets."""

    def __init__(self, cdp: CDPConnection, session: str) -> None:
        self.cdp = cdp
        self.session = session
        self._screen = Screen(cdp, 0, 0, emulate_size=False)
        self._screen.session = session

    @classmethod
    async def attach(cls, devtools_url: str) -> "Remote":
        cdp = await CDPConnection.open(devtools_url)
        targets = (await cdp.send("Target.getTargets"))["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        session = (await cdp.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}))["sessionId"]
        return cls(cdp, session)

    async def state(self) -> dict[str, Any]:
        return await self._screen.tv("state")

    async def press(self, *keys: str) -> None:
        for key in keys:
            await self._screen.press(key)
            await asyncio.sleep(0.15)

    async def click(self, x: float, y: float) -> None:
        await self._screen.click(x, y)

    async def tv(self, function: str, *arguments: Any) -> Any:
        """``window.tv.<function>(...)`` in the TV page."""
        return await self._screen.tv(function, *arguments)

    async def frame_urls(self) -> list[str]:
        targets = (await self.cdp.send("Target.getTargets"))["targetInfos"]
        return [t["url"] for t in targets if t["type"] == "iframe"]

    async def in_frame(self, url_part: str, expression: str) -> Any:
        """Evaluates ``expression`` in the overlay frame whose URL contains ``url_part``
        (None while there is no such frame)."""
        targets = (await self.cdp.send("Target.getTargets"))["targetInfos"]
        frame = next((t for t in targets if t["type"] == "iframe" and url_part in t["url"]), None)
        if frame is None:
            return None
        session = (await self.cdp.send("Target.attachToTarget", {"targetId": frame["targetId"], "flatten": True}))["sessionId"]
        try:
            reply = await self.cdp.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
            return reply.get("result", {}).get("value")
        finally:
            await self.cdp.send("Target.detachFromTarget", {"sessionId": session})

    async def focused_in_frame(self, url_part: str) -> Optional[str]:
        """The text of the focused element inside that overlay frame (None: nothing focused)."""
        return await self.in_frame(url_part, "document.activeElement && document.activeElement !== document.body"
                                             " ? document.activeElement.textContent.trim() : null")

    async def close(self) -> None:
        await self.cdp.close()


class FixturePages:
    """Serves ``/solid.html?color=R,G,B``: a page filled with one colour that says
    INTERACTIVE_SHOW_ANALYTICS through the IOS bridge as soon as it is parsed; ``/silent.html``:
    a page that loads and never says it."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path.startswith("/silent.html"):
                    body = b"<!doctype html><html><body>loaded, never ready</body></html>"
                elif self.path.startswith("/solid.html"):
                    query = dict(part.split("=", 1) for part in self.path.partition("?")[2].split("&") if "=" in part)
                    color = query.get("color", "255,0,255")
                    message = json.dumps(json.dumps({"type": "INTERACTIVE_SHOW_ANALYTICS", "data": {}}))
                    body = (f"<!doctype html><html><body style='margin:0;height:100vh;background:rgb({color})'>"
                            f"<script>window.webkit.messageHandlers.IOS.postMessage({message});</script>"
                            "</body></html>").encode()
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def overlay_spec(timeline_id: str, url: str, location: int = 4, width: int = 40, height: int = 30,
                 duration: int = 60, **extra: Any) -> dict[str, Any]:
    """A backend overlay object (BACKEND.md) for ``POST /_admin/emit``."""
    return {"timelineId": timeline_id, "typeTimeline": 1, "url": url,
            "position": {"alignment": location, "width": width, "height": height},
            "duration": duration, "targets": ["all"], "traceLock": False, "requireVip": False,
            "requireBet": False, "requireFanclub": False, "betAmount": 0, **extra}
