"""What the reference players' tests share, whatever the engine: the player as a subprocess,
the fixture pages (including hostile ones), the backend's overlays, bounded waiting, and the
pixels of a screenshot."""

from __future__ import annotations

import abc
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional, TypeVar, Union

from PIL import Image, ImageChops

from tools.testsupport.processes import stop_process  # noqa: E402  (the conftest puts the repository on sys.path)

START_TIMEOUT = 60.0
SCREEN = (1280, 720)
T = TypeVar("T")


class Unmet:
    """What a probe of :func:`eventually` returns when its condition does not hold yet but it
    has something to show for it (the page state it read): the timeout's report says it."""

    def __init__(self, seen: Any) -> None:
        self.seen = seen


async def eventually(probe: Callable[[], Awaitable[Union[T, "Unmet", None]]], what: str, timeout: float = 15.0) -> T:
    """Calls ``probe`` every 100 ms until it returns something other than None, False or an
    :class:`Unmet`; after ``timeout`` seconds, fails with the last ``Unmet``'s ``seen``."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if value is not None and value is not False and not isinstance(value, Unmet):
            return value
        if time.monotonic() > deadline:
            seen = f"; last seen: {value.seen!r}" if isinstance(value, Unmet) else ""
            raise AssertionError(f"not within {timeout}s: {what}{seen}")
        await asyncio.sleep(0.1)


async def logged(player: "PlayerProcess", text: str) -> bool:
    """Whether the player's log holds ``text`` yet (a probe for :func:`eventually`)."""
    return text in player.log()


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


class PlayerProcess(abc.ABC):
    """A reference player (``program``) on the daemon's socket, headless, its screenshots and log
    under ``tmp``, serving its remote's socket (``socket_option``: ``control_socket``, in a short
    folder of its own: socket paths are limited to 107 bytes); started once that socket exists
    (the player serves it once its TV page is up)."""

    def __init__(self, program: Path, socket_option: str, daemon_socket: str, tmp: Path,
                 extra: tuple[str, ...] = ()) -> None:
        self.tmp = tmp
        self.screenshots = tmp / "screenshots"
        self._socket_folder = Path(tempfile.mkdtemp(prefix="player-", dir="/tmp"))
        self.control_socket = self._socket_folder / "control.sock"
        self.log_path = tmp / "player.log"
        self._log = self.log_path.open("wb")
        environment = dict(os.environ)
        environment.pop("DISPLAY", None)
        environment["PYTHONFAULTHANDLER"] = "1"  # on SIGABRT (stop), every thread's stack to the log
        self.process = subprocess.Popen(
            [sys.executable, str(program), "--socket", daemon_socket, socket_option, str(self.control_socket),
             "--headless", "--screenshot-dir", str(self.screenshots), *extra],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, env=environment)

    def wait_started(self) -> None:
        """Returns once the TV page is up (the player listens on its socket)."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the player exited with {self.process.returncode}:\n{self.log()}")
            if self.control_socket.exists():
                return
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

    def stop(self, timeout: float = 30.0) -> Optional[int]:
        """SIGTERM and a bounded wait; a player still running then gets SIGABRT, so that its log
        shows where each of its threads was, and SIGKILL after 5 s more; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                stop_process(self.process, 5.0, signal.SIGABRT)
        status = self.process.returncode
        self._log.close()
        shutil.rmtree(self._socket_folder, ignore_errors=True)
        return status

    @abc.abstractmethod
    async def attach_remote(self) -> Any:
        """The test's remote: presses keys, clicks, reads the TV page and the overlays' pages
        (player_fixtures.py lists what it does)."""


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


def coloured_box(path: Path, colour: tuple[int, int, int], tolerance: int = 8) -> Optional[tuple[int, int, int, int]]:
    """The bounding box (left, top, right, bottom) of the pixels of ``colour`` in a PNG."""
    with Image.open(path) as image:
        bands = image.convert("RGB").split()
    masks = [band.point(lambda v, c=c: 255 if abs(v - c) <= tolerance else 0) for band, c in zip(bands, colour)]
    return ImageChops.multiply(ImageChops.multiply(masks[0], masks[1]), masks[2]).getbbox()


HOSTILE_PAGE = """<!doctype html><html><body style="margin:0;height:100vh;background:rgb(64,0,0)">
<button id="ok">OK</button>
<script>
function report(what, value) { navigator.sendBeacon('/report?what=' + what, String(value)); }
var IOS = window.webkit.messageHandlers.IOS;
IOS.postMessage(JSON.stringify({type: 'INTERACTIVE_SHOW_ANALYTICS', data: {}}));
report('tvReport-in-frame', typeof window.__tvReport);
try { report('tvReport-in-parent', typeof parent.__tvReport); } catch (error) { report('tvReport-in-parent', error.name); }
document.getElementById('ok').addEventListener('click', function () {
  IOS.postMessage(JSON.stringify({type: 'INTERACTIVE_ACTION_REPORT', data: {answer: {choice: 'A'}}}));
  var evil = new URLSearchParams(location.search).get('evil') + '?overlay=' + encodeURIComponent(window.name);
  try { report('popup', window.open(evil + '&via=popup') ? 'opened' : 'blocked'); } catch (error) { report('popup', error.name); }
  setTimeout(function () {
    try { top.location.href = evil + '&via=top'; report('top', 'navigating'); } catch (error) { report('top', error.name); }
  }, 300);
});
</script></body></html>"""

# In the TV page's place: confirms the bet of ?overlay= through the player's binding, ten times
# over two seconds (the daemon may ask for the confirmation after the page loaded).
EVIL_PAGE = """<!doctype html><html><body style="background:rgb(0,64,0)">evil
<script>
function report(what, value) { navigator.sendBeacon('/report?what=' + what, String(value)); }
var query = new URLSearchParams(location.search), calls = 0;
function confirmBet() {
  if (typeof window.__tvReport === 'function') {
    window.__tvReport(JSON.stringify({event: 'action', name: 'answer.confirm',
                                      data: {overlayId: query.get('overlay'), accept: true}}));
  }
  if (++calls === 1) { report('evil-' + query.get('via'), typeof window.__tvReport); }
  if (calls < 10) { setTimeout(confirmBet, 200); }
}
confirmBet();
</script></body></html>"""

# Says it is ready, then posts ?big= messages of 2 MiB and ?count= small ones as fast as it can.
FLOOD_PAGE = """<!doctype html><html><body style="margin:0;height:100vh;background:rgb(0,0,64)">
<script>
var IOS = window.webkit.messageHandlers.IOS, query = new URLSearchParams(location.search);
IOS.postMessage(JSON.stringify({type: 'INTERACTIVE_SHOW_ANALYTICS', data: {}}));
setTimeout(function () {
  var count = Number(query.get('count')), big = Number(query.get('big')), pad = 'x'.repeat(2 << 20);
  for (var j = 0; j < big; j++) { IOS.postMessage(JSON.stringify({type: 'INTERACTIVE_PING_ANALYTICS', data: {pad: pad}})); }
  for (var i = 0; i < count; i++) { IOS.postMessage('{"type":"INTERACTIVE_PING_ANALYTICS","data":{"n":' + i + '}}'); }
  navigator.sendBeacon('/report?what=flooded', String(count + big));
}, 0);
</script></body></html>"""


# Says it is ready and keeps what the player posts to its window (window.received).
LISTENER_PAGE = """<!doctype html><html><body style="margin:0;height:100vh;background:rgb(0,64,64)">
<script>
window.received = [];
window.addEventListener('message', function (event) { window.received.push(event.data); });
window.webkit.messageHandlers.IOS.postMessage(JSON.stringify({type: 'INTERACTIVE_SHOW_ANALYTICS', data: {}}));
</script></body></html>"""


class FixturePages:
    """Serves ``/solid.html?color=R,G,B``: a page filled with one colour that says
    INTERACTIVE_SHOW_ANALYTICS through the IOS bridge as soon as it is parsed; ``/silent.html``:
    a page that loads and never says it; ``/listener.html``: ready at once, it keeps what is posted
to its window in ``window.received``; and hostile pages: ``/hostile.html?evil=URL`` (ready at
    once; its OK button answers, then tries a popup and the TV page's navigation to ``URL``, and
    it looks for the player's binding ``__tvReport``), ``/evil.html?overlay=ID&via=V`` (confirms
    that overlay's bet through ``__tvReport``) and ``/flood.html?count=N&big=M`` (M posts of
    2 MiB, then N small ones). The pages report what they saw with ``navigator.sendBeacon`` to
    ``/report?what=NAME``: :meth:`report` returns it."""

    def __init__(self) -> None:
        reports: dict[str, str] = {}
        self._reports = reports
        pages = {"/hostile.html": HOSTILE_PAGE, "/evil.html": EVIL_PAGE, "/flood.html": FLOOD_PAGE,
                 "/listener.html": LISTENER_PAGE}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                path = self.path.partition("?")[0]
                if path == "/silent.html":
                    body = b"<!doctype html><html><body>loaded, never ready</body></html>"
                elif path == "/solid.html":
                    query = dict(part.split("=", 1) for part in self.path.partition("?")[2].split("&") if "=" in part)
                    color = query.get("color", "255,0,255")
                    message = json.dumps(json.dumps({"type": "INTERACTIVE_SHOW_ANALYTICS", "data": {}}))
                    body = (f"<!doctype html><html><body style='margin:0;height:100vh;background:rgb({color})'>"
                            f"<script>window.webkit.messageHandlers.IOS.postMessage({message});</script>"
                            "</body></html>").encode()
                elif path in pages:
                    body = pages[path].encode()
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802
                query = urllib.parse.parse_qs(self.path.partition("?")[2])
                length = min(int(self.headers.get("Content-Length") or 0), 4096)
                reports[query.get("what", [""])[0]] = self.rfile.read(length).decode(errors="replace")
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    async def report(self, what: str) -> Optional[str]:
        """What a page reported as ``what`` (None: nothing yet)."""
        return self._reports.get(what)

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
