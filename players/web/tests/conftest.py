"""Fixtures of the Chromium player's browser tests: the shared ones (players/shared/tests), the
reference player (headless Chromium) and the test's remote (its own DevTools client)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1] / "shared" / "tests")]

from player_fixtures import (backend, daemon, live_daemon, pages, player_arguments,  # noqa: E402,F401
                             player_lifetime, player_socket, register_markers, remote, viewer, voice_daemon)
from tools.testsupport.daemon import DaemonProcess  # noqa: E402
from webplayer_support import WebPlayerProcess  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    register_markers(config)


@pytest_asyncio.fixture
async def player(request: pytest.FixtureRequest, daemon: DaemonProcess, viewer, player_socket: str, tmp_path: Path
                 ) -> AsyncIterator[WebPlayerProcess]:
    """The reference player (with a test's ``player_args`` marker); at the end it must exit 0 on
    SIGTERM and leave no browser behind."""
    folder = tmp_path / "player"
    folder.mkdir()
    process = WebPlayerProcess(player_socket, folder, player_arguments(request))

    async def browser() -> list[int]:
        return [pid for _, pid in await asyncio.wait_for(process.browser_processes(), 10)]
    async with player_lifetime(process, browser):
        yield process
