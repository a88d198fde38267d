"""Helpers of the host's tests: the test pages' HTTP server, a port nothing listens on, pixels
read from screenshots, bounded polling, and the tests' remote driver script."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional, TypeVar

from PIL import Image

PAGES = Path(__file__).resolve().parent / "pages"

# A test's remote driver over spatial.js: the arrows move the focus (the first one focuses the
# first control) and are cancelled only when they did, so that the edges are key-unhandled.
REMOTE = """
window.addEventListener('keydown', function (event) {
  if (!InteractivedSpatial.isArrow(event.key)) { return; }
  var all = InteractivedSpatial.focusables(document), current = document.activeElement;
  var target = !current || current === document.body ? all[0] : InteractivedSpatial.next(current, event.key, all);
  if (target) { target.focus(); event.preventDefault(); }
}, true);
"""
T = TypeVar("T")



async def eventually(probe: Callable[[], Awaitable[Optional[T]]], what: str, timeout: float = 15.0) -> T:
    """Calls ``probe`` every 50 ms until it returns something other than None."""
    deadline = time.monotonic() + timeout
    while (value := await probe()) is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        await asyncio.sleep(0.05)
    return value


class TestPages:
    """tests/pages on http://127.0.0.1:PORT/, plus ``/missing`` (a 404 with an HTML body) and
    ``/events`` (an EventSource stream; ``streams_closed`` counts the ones whose page went away)."""

    __test__ = False

    def __init__(self) -> None:
        pages = self

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, directory=str(PAGES), **kwargs)

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.startswith("/missing"):
                    body = b"<!doctype html><title>missing</title><p>not here</p>"
                    self.send_response(404)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                elif self.path.startswith("/events"):
                    pages._stream(self)
                else:
                    super().do_GET()

        self.closed = threading.Condition()
        self.streams_open = 0
        self.streams_closed = 0
        self._stopping = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def _stream(self, handler: SimpleHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-store")
        handler.end_headers()
        with self.closed:
            self.streams_open += 1
        try:
            # A comment line every 50 ms: writing fails once the page (and its connection) is gone.
            while not self._stopping.wait(0.05):
                handler.wfile.write(b": keep-alive\n\n")
                handler.wfile.flush()
        except OSError:
            with self.closed:
                self.streams_closed += 1
                self.closed.notify_all()

    def wait_streams_closed(self, count: int, timeout: float) -> bool:
        """Whether ``count`` streams have closed within ``timeout`` seconds (blocking: run it in a thread)."""
        with self.closed:
            return self.closed.wait_for(lambda: self.streams_closed >= count, timeout)

    def close(self) -> None:
        self._stopping.set()
        self.server.shutdown()
        self.server.server_close()


def refused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound once, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def pixel(path: Path, x: int, y: int) -> tuple[int, int, int]:
    with Image.open(path) as image:
        return image.convert("RGB").getpixel((x, y))


def near(actual: tuple[int, ...], expected: tuple[float, ...], tolerance: float = 2) -> bool:
    return all(abs(a - e) <= tolerance for a, e in zip(actual, expected))
