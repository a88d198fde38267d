"""Helpers for the backend's tests: run the real server as a subprocess, talk to its admin API,
and drive a recording python-socketio client. Every wait is bounded."""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import aiohttp
import socketio

REPO_ROOT = Path(__file__).resolve().parents[3]
LISTENING = re.compile(r"^backend listening on (https?://\S+)$")
START_TIMEOUT = 20.0


class BackendProcess:
    """``python3 -m tools.backend`` on a free port, started and stopped by a test."""

    def __init__(self, tmp_dir: Path, args: Sequence[str] = ()) -> None:
        self.port_file = tmp_dir / f"port-{os.getpid()}-{id(self)}"
        self.stderr_path = tmp_dir / f"stderr-{id(self)}.log"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tools.backend", "--port", "0",
             "--port-file", str(self.port_file), *args],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            stdin=subprocess.DEVNULL,
        )
        self.base_url = self._read_listening_line()
        self.port = int(self.port_file.read_text())

    def _read_listening_line(self) -> str:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], START_TIMEOUT)
        line = self.proc.stdout.readline().decode().strip() if ready else ""
        match = LISTENING.match(line)
        if not match:
            self.proc.kill()
            self.proc.wait(5)
            raise RuntimeError(f"backend did not start: {line!r}\n{self.stderr()}")
        return match.group(1)

    def stderr(self) -> str:
        """What the server logged so far."""
        return self.stderr_path.read_text(errors="replace")

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        """Signal the server and return its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._stderr.close()
        if self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode

    def admin_sync(self, path: str, body: Any = None) -> Any:
        """A blocking admin call (for fixtures): GET, or POST when ``body`` is given."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.base_url}/_admin/{path}", data=data, method="GET" if data is None else "POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            return json.loads(reply.read())


class Admin:
    """Async admin API client."""

    def __init__(self, base_url: str, session: aiohttp.ClientSession) -> None:
        self.base_url = base_url
        self.session = session

    async def get(self, path: str, /, **params: Any) -> Any:
        async with self.session.get(f"{self.base_url}/_admin/{path}", params=params) as reply:
            assert reply.status == 200, await reply.text()
            return await reply.json()

    async def post(self, path: str, body: Any = None, expect: int = 200) -> Any:
        async with self.session.post(f"{self.base_url}/_admin/{path}", json=body) as reply:
            assert reply.status == expect, await reply.text()
            return await reply.json()

    async def put(self, path: str, body: Any) -> Any:
        async with self.session.put(f"{self.base_url}/_admin/{path}", json=body) as reply:
            assert reply.status == 200, await reply.text()
            return await reply.json()

    async def items(self, log: str, /, **params: Any) -> list[dict[str, Any]]:
        """The records of ``log`` (filters as query parameters)."""
        return (await self.get(log, **params))["items"]

    async def wait_items(
        self, log: str, /, count: int = 1, timeout: float = 5.0, **params: Any
    ) -> list[dict[str, Any]]:
        """Poll ``log`` until it holds at least ``count`` matching records."""
        reply = await self.poll(log, lambda r: len(r["items"]) >= count, timeout, **params)
        return reply["items"]

    async def poll(
        self, path: str, predicate: Callable[[Any], bool], /, timeout: float = 5.0,
        **params: Any,
    ) -> Any:
        """GET ``path`` every 50 ms until ``predicate(reply)`` holds; the last reply."""
        deadline = time.monotonic() + timeout
        while True:
            reply = await self.get(path, **params)
            if predicate(reply):
                return reply
            if time.monotonic() > deadline:
                raise AssertionError(f"{path}: condition not met after {timeout}s: {reply}")
            await asyncio.sleep(0.05)


class RecordingClient:
    """A python-socketio AsyncClient that records what the server sends and its lifecycle."""

    def __init__(self, base_url: str, **client_options: Any) -> None:
        self.base_url = base_url
        options = {"reconnection": False, **client_options}
        self.sio = socketio.AsyncClient(**options)
        self.received: list[tuple[str, Any]] = []
        self.connects = 0
        self.disconnect_reasons: list[str] = []
        self.connect_errors: list[Any] = []
        self._consumed: dict[str, int] = {}
        self._changed = asyncio.Condition()
        self.sio.on("*", self._on_event)
        self.sio.on("connect", self._on_connect)
        self.sio.on("disconnect", self._on_disconnect)
        self.sio.on("connect_error", self._on_connect_error)

    async def _note(self, change: Callable[[], None]) -> None:
        async with self._changed:
            change()
            self._changed.notify_all()

    async def _on_event(self, event: str, *args: Any) -> None:
        await self._note(lambda: self.received.append((event, args[0] if args else None)))

    async def _on_connect(self) -> None:
        await self._note(lambda: setattr(self, "connects", self.connects + 1))

    async def _on_disconnect(self, reason: str = "") -> None:
        await self._note(lambda: self.disconnect_reasons.append(str(reason)))

    async def _on_connect_error(self, data: Any) -> None:
        await self._note(lambda: self.connect_errors.append(data))

    async def connect(
        self,
        tenant: str | None = "vtvlive",
        os_name: str | None = "linuxstb",
        token: str | None = None,
        auth: Any = None,
        headers: dict[str, str] | None = None,
        transports: Sequence[str] = ("websocket",),
    ) -> None:
        """Connect with the daemon's handshake: headers, then auth payload."""
        all_headers = dict(headers or {})
        if tenant is not None:
            all_headers["x-tenant-id"] = tenant
        if os_name is not None:
            all_headers["os"] = os_name
        if token is not None:
            all_headers["Authorization"] = f"Bearer {token}"
        await self.sio.connect(
            self.base_url, headers=all_headers, auth=auth, transports=list(transports),
            socketio_path="socket.io", wait_timeout=10,
        )

    async def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Wait until ``predicate()`` holds (checked after every recorded change)."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), timeout)

    def events(self, name: str) -> list[Any]:
        """Payloads received for ``name``, in order."""
        return [payload for event, payload in self.received if event == name]

    async def next_event(self, name: str, timeout: float = 5.0) -> Any:
        """The next ``name`` payload not yet returned by this method (waits for it)."""
        index = self._consumed.get(name, 0)
        await self.wait_until(lambda: len(self.events(name)) > index, timeout)
        self._consumed[name] = index + 1
        return self.events(name)[index]

    async def join(self, media_id: str, user_id: str = "u1") -> Any:
        """join-room with the daemon's payload; the ack."""
        payload = {"mediaId": media_id, "userId": user_id, "displayName": "An", "os": "linuxstb"}
        return await self.sio.call("join-room", payload, timeout=5)

    async def close(self) -> None:
        """Disconnect and stop reconnecting."""
        await self.sio.disconnect()
        await self.sio.shutdown()


def tls_client_context(cert: Path) -> ssl.SSLContext:
    """A client context trusting the test's self-signed certificate."""
    context = ssl.create_default_context(cafile=str(cert))
    return context
