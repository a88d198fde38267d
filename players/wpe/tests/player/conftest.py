"""Fixtures of the WPE player's tests: the shared ones (players/shared/tests: the reference
backend, the daemon joined to its live room with a logged-in viewer, the fixture pages), the WPE
player headless, whose remote is a client of its host socket. The host's fixtures (the
clip) come from ../conftest.py."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[2] / "shared" / "tests")]

from player_fixtures import (backend, daemon, live_daemon, pages, player_arguments,  # noqa: E402,F401
                             player_lifetime, player_socket, register_markers, remote, viewer, voice_daemon)
from tools.testsupport.daemon import DaemonProcess  # noqa: E402
from wpeplayer_support import WpePlayerProcess, command_name  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    register_markers(config)


@pytest_asyncio.fixture
async def player(request: pytest.FixtureRequest, clip: Path, daemon: DaemonProcess, viewer,
                 player_socket: str, tmp_path: Path) -> AsyncIterator[WpePlayerProcess]:
    """The WPE player (with a test's ``player_args`` marker); at the end it must exit 0 on
    SIGTERM and leave none of its processes behind; no Chromium runs in it."""
    folder = tmp_path / "player"
    folder.mkdir()
    process = WpePlayerProcess(player_socket, folder, player_arguments(request))

    async def processes() -> list[int]:
        running = process.processes()
        names = [command_name(pid) for pid in running]
        assert "wpe-host" in names and not any("chrom" in name.lower() for name in names), names
        return running
    async with player_lifetime(process, processes):
        yield process
