"""Chromium started with the DevTools protocol on a free port, stopped with its process group."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Optional

START_TIMEOUT = 30.0


def chromium_binary() -> str:
    """Debian's ``chromium`` (installed by scripts/setup)."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise FileNotFoundError("chromium is not installed (scripts/setup installs Debian's chromium)")


class Browser:
    """One Chromium process with a throw-away profile.

    Headless (``--headless=new``) when ``headless`` is true, else a full-screen kiosk window on
    ``$DISPLAY``. Runs with ``--site-per-process`` so every overlay from another site than the
    TV page is its own DevTools target, where the IOS shim is installed before its scripts run.
    """

    def __init__(self, width: int, height: int, headless: bool) -> None:
        self.width = width
        self.height = height
        self.headless = headless
        self.profile = Path(tempfile.mkdtemp(prefix="interactived-player-"))
        self.process: Optional[asyncio.subprocess.Process] = None
        self.devtools_url = ""

    async def start(self) -> str:
        """Starts Chromium; returns the browser's DevTools WebSocket URL."""
        arguments = [
            chromium_binary(), f"--user-data-dir={self.profile}", "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1", "--site-per-process",
            "--autoplay-policy=no-user-gesture-required", "--no-first-run",
            "--no-default-browser-check", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-translate",
            "--disable-features=Translate,MediaRouter,DialMediaRouteProvider",
            "--password-store=basic", "--hide-scrollbars", "--mute-audio",
            "--disable-dev-shm-usage", f"--window-size={self.width},{self.height}",
        ]
        if self.headless:
            arguments.append("--headless=new")
        else:
            arguments += ["--kiosk", "--start-fullscreen", "--window-position=0,0"]
        if os.geteuid() == 0:
            arguments.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
        arguments.append("about:blank")
        self.process = await asyncio.create_subprocess_exec(
            *arguments, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
        self.devtools_url = await self._wait_devtools_url()
        return self.devtools_url

    async def _wait_devtools_url(self) -> str:
        port_file = self.profile / "DevToolsActivePort"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while loop.time() < deadline:
            assert self.process is not None
            if self.process.returncode is not None:
                raise RuntimeError(f"chromium exited with status {self.process.returncode}")
            if port_file.exists():
                lines = port_file.read_text().split("\n")
                if len(lines) >= 2 and lines[0].isdigit() and lines[1]:
                    return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
            await asyncio.sleep(0.05)
        raise RuntimeError(f"chromium did not open its DevTools port within {START_TIMEOUT}s")

    async def stop(self) -> None:
        """Terminates Chromium and its helper processes (its process group), then the profile."""
        if self.process is not None and self.process.returncode is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                await asyncio.wait_for(self.process.wait(), 10)
            except asyncio.TimeoutError:
                os.killpg(self.process.pid, signal.SIGKILL)
                await asyncio.wait_for(self.process.wait(), 10)
            # Helpers (renderers, zygote) may outlive the browser process by a moment.
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
