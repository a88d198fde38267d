"""The asyncio driver of ``wpe-host`` (players/wpe/host): start it, send its commands, await
their replies and its events with bounded waits, stop it with every process it started gone.

    host = await WpeHost.start(video=clip)
    await host.create_view("o1", url=url, x=0, y=0, width=640, height=360, visible=True)
    await host.wait_event("load-finished", viewId="o1")
    await host.run_js("o1", "window.postMessage('hi', '*')")
    await host.screenshot(path)
    status = await host.stop()

Every command gets exactly one reply carrying its ``id`` (README.md, "Protocol"): ``request``
returns it, or raises ``HostError`` for an ``error`` or ``js-error`` reply. Events are kept in
order as they arrive (the latest ``EVENT_LOG`` of them); ``wait_event`` finds the first one at or
after a mark (``mark()``, taken before the command that causes it) that matches, so an event that
came quickly is not missed. ``listen(callback)`` hands every event to a callback as it arrives.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import logging
import os
import signal
from pathlib import Path
from typing import Any, Callable, Optional, Union

WPE_DIR = Path(__file__).resolve().parent
REPO_ROOT = WPE_DIR.parents[1]
HOST_BINARY = Path(os.environ.get("WPE_HOST_BINARY", WPE_DIR / "host" / "build" / "wpe-host"))
# The spatial navigation both reference players use (players/shared/page).
SPATIAL_SCRIPT = REPO_ROOT / "players" / "shared" / "page" / "spatial.js"
DEFAULT_TIMEOUT = 15.0
# How many of the latest events wait_event can find (a long-running player's would grow without end).
EVENT_LOG = 10_000

log = logging.getLogger(__name__)
Match = Union[str, Callable[[dict[str, Any]], bool]]


class HostError(Exception):
    """The host answered a command with ``error`` or ``js-error``, or went away."""

    def __init__(self, message: str, reply: Optional[dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.reply = reply


class WpeHost:
    """A running ``wpe-host``: its process (when this driver started it) and its control channel."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 process: Optional[asyncio.subprocess.Process]) -> None:
        self.process = process
        self.ready: dict[str, Any] = {}
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._events: collections.deque[dict[str, Any]] = collections.deque(maxlen=EVENT_LOG)
        self._dropped = 0  # events that left the log (its first one's position)
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        self._arrived = asyncio.Condition()
        self._closed = False
        self.gone = asyncio.Event()  # set once the control channel closed (the host quit or died)
        self._reading = asyncio.create_task(self._read())

    # ---- starting and stopping ----

    @classmethod
    async def start(cls, *, size: Optional[str] = None, video: Optional[Path] = None, fps: Optional[int] = None,
                    args: tuple[str, ...] = (), env: Optional[dict[str, str]] = None,
                    stderr: Any = None, timeout: float = 30.0, binary: Path = HOST_BINARY) -> "WpeHost":
        """Starts the host (headless unless ``env`` keeps ``DISPLAY``) and waits for ``ready``."""
        if not binary.exists():
            raise HostError(f"{binary} is missing: run scripts/setup (or make -C players/wpe/host)")
        command = [str(binary)]
        if size:
            command += ["--size", size]
        if video:
            command += ["--video", str(video)]
        if fps:
            command += ["--fps", str(fps)]
        command += list(args)
        environment = dict(os.environ if env is None else env)
        if env is None:
            environment.pop("DISPLAY", None)
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
            env=environment, limit=64 * 1024 * 1024)
        assert process.stdout is not None and process.stdin is not None
        host = cls(process.stdout, process.stdin, process)
        try:
            host.ready = await host.wait_event("ready", timeout=timeout)
        except BaseException:
            await host.stop()
            raise
        return host

    @classmethod
    async def connect(cls, socket_path: Union[str, Path], timeout: float = 30.0) -> "WpeHost":
        """Attaches to a host serving ``--control-socket`` (one WPEWebDriver started), once it listens."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            try:
                reader, writer = await asyncio.open_unix_connection(str(socket_path), limit=64 * 1024 * 1024)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if loop.time() > deadline:
                    raise HostError(f"nothing listens on {socket_path} after {timeout}s") from None
                await asyncio.sleep(0.05)
        host = cls(reader, writer, None)
        host.ready = await host.wait_event("ready", timeout=timeout)
        return host

    @property
    def pid(self) -> int:
        """The host's process id (from its ``ready`` event)."""
        return int(self.ready["pid"])

    def processes(self) -> list[int]:
        """The host and every process it started (WebKit's web and network processes)."""
        return [self.pid, *descendants(self.pid)]

    async def stop(self, timeout: float = 20.0) -> Optional[int]:
        """SIGTERM, then waits (bounded) for the host to exit; SIGKILL if it does not. The exit
        status (None when this driver did not start the host: it only closes the channel)."""
        if self.process is None:
            await self.close()
            return None
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(timeout):
                    await self.process.wait()
            except asyncio.TimeoutError:
                self.process.kill()
                await self.process.wait()
        await self.close()
        return self.process.returncode

    async def close(self) -> None:
        """Closes the control channel (the host then quits, as at the end of its input)."""
        if not self._writer.is_closing():
            self._writer.close()
            with contextlib.suppress(ConnectionError, BrokenPipeError):
                await self._writer.wait_closed()
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading

    # ---- commands ----

    async def request(self, cmd: str, timeout: float = DEFAULT_TIMEOUT, **fields: Any) -> dict[str, Any]:
        """Sends one command and returns its reply; ``error`` and ``js-error`` raise HostError."""
        answer = await self.reply_to(self.send(cmd, **fields), cmd, timeout)
        if answer["event"] in ("error", "js-error"):
            raise HostError(f"{cmd}: {answer.get('message')}", answer)
        return answer

    def send(self, cmd: str, **fields: Any) -> asyncio.Future[dict[str, Any]]:
        """Writes one command now (commands reach the host in the order they were sent) and
        returns the future of its reply, whatever it is (``error`` included)."""
        if self._closed:
            raise HostError(f"the host is gone (sending {cmd})")
        identifier = next(self._ids)
        reply: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[identifier] = reply
        reply.add_done_callback(lambda _: self._replies.pop(identifier, None))
        self._writer.write((json.dumps({"cmd": cmd, "id": identifier, **fields}) + "\n").encode())
        return reply

    async def reply_to(self, reply: asyncio.Future[dict[str, Any]], cmd: str,
                       timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The reply of a command :meth:`send` wrote (HostError after ``timeout`` seconds)."""
        try:
            await self._writer.drain()
            # Not asyncio.wait_for: in Python 3.11 it loses a cancellation that meets the reply.
            async with asyncio.timeout(timeout):
                return await reply
        except asyncio.TimeoutError:
            raise HostError(f"no reply to {cmd} within {timeout}s") from None
        except (ConnectionError, BrokenPipeError) as error:
            raise HostError(f"the host is gone ({cmd}): {error}") from None

    async def send_line(self, data: bytes) -> None:
        """Writes raw bytes to the host's input (for tests of what it does with lines that are no command)."""
        self._writer.write(data)
        await self._writer.drain()

    async def create_view(self, view_id: str, **options: Any) -> dict[str, Any]:
        return await self.request("create-view", viewId=view_id, **options)

    async def navigate(self, view_id: str, url: str) -> dict[str, Any]:
        return await self.request("navigate", viewId=view_id, url=url)

    async def run_js(self, view_id: str, script: str, *, world: str = "page", is_async: bool = False,
                     timeout: float = DEFAULT_TIMEOUT) -> Any:
        """The script's value (JSON); with ``is_async`` the script is an async function's body."""
        reply = await self.request("run-js", timeout=timeout, viewId=view_id, script=script, world=world,
                                   **({"async": True} if is_async else {}))
        return reply.get("value")

    async def settle(self, view_id: str, quiet_ms: int = 150, timeout: float = DEFAULT_TIMEOUT) -> bool:
        """Returns once the view rendered and then delivered no new frame for ``quiet_ms``: what
        its page changed before is in the host's copy of its frame (a screenshot shows it).
        False when frames kept coming (an animated page) until the timeout."""
        reply = await self.request("settle", timeout=timeout + 1, viewId=view_id, quietMs=quiet_ms,
                                   timeoutMs=int(timeout * 1000))
        return bool(reply["settled"])

    async def key(self, key: str, view_id: Optional[str] = None) -> Optional[str]:
        """A remote key tapped (to the focused view, or ``view_id``); the view it went to."""
        reply = await self.request("key", key=key, **({"viewId": view_id} if view_id else {}))
        return reply.get("viewId")

    async def click(self, x: int, y: int) -> Optional[str]:
        """A click at screen coordinates; the view that got it."""
        return (await self.request("click", x=x, y=y)).get("viewId")

    async def screenshot(self, path: Union[str, Path]) -> Path:
        await self.request("screenshot", path=str(path))
        return Path(path)

    # ---- events ----

    def mark(self) -> int:
        """A position in the event log: wait_event(..., since=mark) sees only later events."""
        return self._dropped + len(self._events)

    def events(self, since: int = 0) -> list[dict[str, Any]]:
        return list(self._events)[max(0, since - self._dropped):]

    def listen(self, callback: Callable[[dict[str, Any]], None]) -> None:
        """``callback(event)`` for every event from now on (not replies), as it arrives."""
        self._listeners.append(callback)

    async def wait_event(self, match: Match, since: int = 0, timeout: float = DEFAULT_TIMEOUT,
                         **fields: Any) -> dict[str, Any]:
        """The first event at or after ``since`` whose name is ``match`` (or for which ``match``
        is true) and whose fields equal ``fields``; HostError after ``timeout`` seconds."""
        def matches(event: dict[str, Any]) -> bool:
            named = match(event) if callable(match) else event.get("event") == match
            return named and all(event.get(key) == value for key, value in fields.items())

        async def find() -> dict[str, Any]:
            position = since
            async with self._arrived:
                while True:
                    for event in self.events(position):
                        if matches(event):
                            return event
                    position = self.mark()
                    if self._closed:
                        raise HostError(f"the host's channel closed before {match} {fields}")
                    await self._arrived.wait()

        try:
            async with asyncio.timeout(timeout):
                return await find()
        except asyncio.TimeoutError:
            raise HostError(f"no {match} {fields} within {timeout}s") from None

    async def _read(self) -> None:
        try:
            while line := await self._reader.readline():
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(event, dict):
                    continue
                reply = self._replies.get(event.get("id")) if isinstance(event.get("id"), int) else None
                if reply is not None and not reply.done():
                    reply.set_result(event)
                elif "id" not in event:
                    for listener in list(self._listeners):
                        try:
                            listener(event)
                        except Exception:  # a listener's bug must not end the reading
                            log.exception("a listener failed on %s", event.get("event"))
                async with self._arrived:
                    if len(self._events) == self._events.maxlen:
                        self._dropped += 1
                    self._events.append(event)
                    self._arrived.notify_all()
        finally:
            self._closed = True
            self.gone.set()
            for reply in self._replies.values():
                if not reply.done():
                    reply.set_exception(HostError("the host's channel closed"))
            async with self._arrived:
                self._arrived.notify_all()


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (by parent, from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat and stat[0] != "Z":
                parents[int(entry.name)] = int(stat[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, its_parent in parents.items() if its_parent == parent]
        found += children
        frontier += children
    return found


def alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running (zombies count as gone)."""
    return [pid for pid in pids if (stat := _stat(pid)) and stat[0] != "Z"]


def _stat(pid: int) -> Optional[list[str]]:
    """State, parent pid and the rest of /proc/PID/stat after the command name."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
