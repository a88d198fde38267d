"""Two network namespaces joined by a veth pair, made for one test and removed after it.

The server namespace holds Janus (``server_address``, ``.1``); the box namespace holds what
plays the set-top box and its friends (the media process, aiortc peers: ``box_address``,
``.2``). Each has only its loopback and its end of the veth, with IPv6 off, so every ICE
candidate is one of the two addresses and no packet can go anywhere else. (Janus never gathers
loopback candidates, so the peers cannot all share 127.0.0.1.)

Code enters the box namespace either as a subprocess (``box_command``: ``ip netns exec``) or as
a thread (``run_in_box``): a network namespace belongs to a thread, and the sockets and child
processes a thread makes are in its namespace.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import secrets
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Generic, Optional, TypeVar

T = TypeVar("T")

_CLONE_NEWNET = 0x40000000


class NamespaceError(RuntimeError):
    pass


def _ip(*arguments: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["ip", *arguments], capture_output=True, text=True, timeout=10)
    if check and result.returncode != 0:
        raise NamespaceError(f"ip {' '.join(arguments)}: {result.stderr.strip()}")
    return result


def is_root() -> bool:
    return os.geteuid() == 0


class VoiceNetwork:
    """``with VoiceNetwork() as net:`` two namespaces ``vs-<id>`` (server) and ``vb-<id>`` (box),
    veth ``vs<id>``/``vb<id>``, addresses ``10.<a>.<b>.1/24`` and ``.2/24``. Removed on exit,
    whatever happened inside; ``remove()`` is idempotent."""

    def __init__(self, tag: Optional[str] = None) -> None:
        token = tag or secrets.token_hex(4)
        self.id = token[:8]
        self.server = f"vs-{self.id}"
        self.box = f"vb-{self.id}"
        self.server_link = f"vs{self.id}"
        self.box_link = f"vb{self.id}"
        number = int(self.id, 16)
        self.subnet = f"10.{100 + number % 100}.{(number >> 8) % 250 + 1}"
        self.server_address = f"{self.subnet}.1"
        self.box_address = f"{self.subnet}.2"
        self._made: list[str] = []

    def __enter__(self) -> "VoiceNetwork":
        try:
            self.create()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def create(self) -> None:
        for namespace in (self.server, self.box):
            _ip("netns", "add", namespace)
            self._made.append(namespace)
        _ip("link", "add", self.server_link, "netns", self.server, "type", "veth", "peer", "name", self.box_link, "netns", self.box)
        for namespace, link, address in ((self.server, self.server_link, self.server_address), (self.box, self.box_link, self.box_address)):
            for key in ("all", "default", "lo"):
                self._exec(namespace, "sysctl", "-q", "-w", f"net.ipv6.conf.{key}.disable_ipv6=1")
            _ip("-n", namespace, "link", "set", "lo", "up")
            _ip("-n", namespace, "addr", "add", f"{address}/24", "dev", link)
            _ip("-n", namespace, "link", "set", link, "up")
        # "up" is asked for at once, but the kernel reports the link running (operstate UP) only
        # a moment later, and libnice ignores the interfaces that are not running yet.
        deadline = time.monotonic() + 5
        for namespace, link in ((self.server, self.server_link), (self.box, self.box_link)):
            while " UP " not in _ip("-n", namespace, "-br", "link", "show", "dev", link).stdout + " ":
                if time.monotonic() > deadline:
                    raise NamespaceError(f"{link} in {namespace} is not running after 5 s")
                time.sleep(0.02)

    def remove(self) -> None:
        # Deleting a namespace deletes the veth end inside it, and with it the pair.
        while self._made:
            _ip("netns", "delete", self._made.pop(), check=False)

    def _exec(self, namespace: str, *command: str) -> None:
        result = subprocess.run(["ip", "netns", "exec", namespace, *command], capture_output=True, text=True, timeout=10)
        if result.returncode != 0:
            raise NamespaceError(f"{' '.join(command)} in {namespace}: {result.stderr.strip()}")

    def server_command(self, argv: list[str]) -> list[str]:
        """``argv`` run in the server namespace."""
        return ["ip", "netns", "exec", self.server, *argv]

    def box_command(self, argv: list[str]) -> list[str]:
        """``argv`` run in the box namespace."""
        return ["ip", "netns", "exec", self.box, *argv]

    def run_in_box(self, main: Callable[[], Awaitable[T]], timeout: float) -> T:
        """Runs ``asyncio.run(main())`` on a thread that joined the box namespace; returns its
        result or raises its exception. ``timeout`` bounds the wait: past it the coroutine is
        cancelled (and the thread joined) before ``TimeoutError`` is raised."""
        thread = BoxThread(self, main)
        return thread.result(timeout)

    def start_in_box(self, main: Callable[[], Awaitable[T]]) -> "BoxThread[T]":
        """Like ``run_in_box``, without waiting: ``thread.result(timeout)`` or ``thread.cancel()`` later."""
        return BoxThread(self, main)


class BoxThread(Generic[T]):
    """An asyncio loop on its own thread in the box namespace, running one coroutine."""

    def __init__(self, net: VoiceNetwork, main: Callable[[], Awaitable[T]]) -> None:
        self._main = main
        self._namespace = net.box
        self._outcome: dict[str, object] = {}
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._task: Optional[asyncio.Task] = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"voice-box-{net.id}", daemon=True)
        self._thread.start()
        self._started.wait(10)

    def _run(self) -> None:
        try:
            enter_namespace(self._namespace)

            async def run() -> T:
                self._loop = asyncio.get_running_loop()
                self._task = asyncio.current_task()
                self._started.set()
                return await self._main()

            self._outcome["result"] = asyncio.run(run())
        except BaseException as error:  # handed to the caller's thread
            self._outcome["error"] = error
        finally:
            self._started.set()

    def cancel(self) -> None:
        """Cancels the coroutine (it finishes its cleanup); returns at once."""
        if self._loop is not None and self._task is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._task.cancel)

    def result(self, timeout: float) -> T:
        """Waits at most ``timeout`` s for the coroutine; past it, cancels it, waits 15 s more
        for its cleanup and raises ``TimeoutError``."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            self.cancel()
            self._thread.join(15)
            raise TimeoutError(f"the box's coroutine did not finish within {timeout} s")
        if "error" in self._outcome:
            raise self._outcome["error"]  # type: ignore[misc]
        return self._outcome["result"]  # type: ignore[return-value]


def enter_namespace(name: str) -> None:
    """Moves the calling thread into network namespace ``name`` (setns(2); root only)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.setns(fd, _CLONE_NEWNET) != 0:
            error = ctypes.get_errno()
            raise NamespaceError(f"setns {name}: {os.strerror(error)}")
    finally:
        os.close(fd)
