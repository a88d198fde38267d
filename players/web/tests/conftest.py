"""Fixtures of the browser tests: the reference backend, the daemon joined to its live room
with a logged-in viewer, the reference player (headless Chromium) and the test's remote."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

PLAYER_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = PLAYER_DIR.parents[1]
for path in (PLAYER_DIR, REPO_ROOT / "clients" / "python", REPO_ROOT):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import interactived_client  # noqa: E402
from tools.testsupport.daemon import DaemonProcess  # noqa: E402
from tools.testsupport.fixtures import backend, live_daemon  # noqa: E402,F401  (fixtures)
from webplayer_support import FixturePages, PlayerProcess, Remote, alive  # noqa: E402

MEDIA = "m1"


@pytest.fixture
def daemon(live_daemon: DaemonProcess) -> DaemonProcess:
    """The daemon of the browser tests: the one configured for the reference backend."""
    return live_daemon


@pytest_asyncio.fixture
async def viewer(daemon: DaemonProcess) -> AsyncIterator[interactived_client.Client]:
    """The control connection of the test: Alice logged in, the live room m1 joined."""
    client = await interactived_client.connect(daemon.socket_path, client="browser-test")
    await asyncio.wait_for(client.call("session.login", {
        "token": "token-alice", "userId": "alice", "displayName": "Alice"}), 15)
    joined = await asyncio.wait_for(client.call("room.join", {"mediaId": MEDIA, "mode": "live"}), 15)
    assert joined["state"] == "joined"
    yield client
    await client.close()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "player_args(*args): more command-line arguments of the player")


@pytest_asyncio.fixture
async def player(request: pytest.FixtureRequest, daemon: DaemonProcess, viewer: interactived_client.Client,
                 tmp_path: Path) -> AsyncIterator[PlayerProcess]:
    """The reference player (with a test's ``player_args`` marker); at the end it must exit 0 on
    SIGTERM and leave no browser behind."""
    folder = tmp_path / "player"
    folder.mkdir()
    marker = request.node.get_closest_marker("player_args")
    process = PlayerProcess(daemon.socket_path, folder, tuple(marker.args) if marker else ())
    browser: list[int] = []
    try:
        await asyncio.to_thread(process.wait_started)
        yield process
        browser = await asyncio.wait_for(process.browser_processes(), 10)
    finally:
        status = await asyncio.to_thread(process.stop)
    assert status == 0, process.log()
    assert browser and alive(browser) == [], f"browser processes left behind: {alive(browser)}"


@pytest_asyncio.fixture
async def remote(player: PlayerProcess) -> AsyncIterator[Remote]:
    control = await Remote.attach(player.url_file.read_text().strip())
    yield control
    await control.close()


@pytest.fixture
def pages() -> Iterator[FixturePages]:
    server = FixturePages()
    yield server
    server.stop()
