"""pytest fixtures of the reference players' browser tests, whatever the engine: the daemon
joined to the reference backend's live room with a logged-in viewer, the fixture pages, and the
life of a player process (``player_lifetime``). A player's conftest.py imports them and adds its
``player`` and ``remote``.

The scenarios (``scenario_*.py`` beside this file) are tests both players run: each player's
tests import their test functions (``test_*_scenarios.py``), with its own ``player`` and
``remote`` fixtures; the remote plays the remote control and reads the TV page
(``state()``, ``tv(...)``, ``press(...)``, ``click(x, y)``) and the overlays' pages
(``frame_urls()``, ``in_frame(url_part, expression)``, ``focused_in_frame(url_part)``).
A test that takes ``voice_daemon`` (before ``player``) runs its player through
``ScriptedVoiceRelay``, which adds a scripted voice room to the real daemon's conversation.

Importing this module puts players/shared and the Python client library on ``sys.path``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

REPO_ROOT = Path(__file__).resolve().parents[3]
for _path in (REPO_ROOT / "players" / "shared", REPO_ROOT / "clients" / "python", REPO_ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import interactived_client  # noqa: E402
from player_support import FixturePages, PlayerProcess, alive  # noqa: E402
from scripted_voice_relay import ScriptedVoiceRelay  # noqa: E402
from tools.testsupport.daemon import DaemonProcess  # noqa: E402
from tools.testsupport.fixtures import backend, live_daemon  # noqa: E402,F401  (fixtures)

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


@pytest_asyncio.fixture
async def voice_daemon(daemon: DaemonProcess) -> AsyncIterator[ScriptedVoiceRelay]:
    """The daemon with a scripted voice room (scripted_voice_relay.py): the player of a test
    that takes this fixture connects through it."""
    relay = await ScriptedVoiceRelay(daemon.socket_path).start()
    yield relay
    await relay.stop()


@pytest.fixture
def player_socket(request: pytest.FixtureRequest, daemon: DaemonProcess) -> str:
    """The socket the player is given: the daemon's, or the voice relay's for a test that takes
    ``voice_daemon``."""
    if "voice_daemon" in request.fixturenames:
        return request.getfixturevalue("voice_daemon").socket_path
    return daemon.socket_path


@pytest.fixture
def pages() -> Iterator[FixturePages]:
    server = FixturePages()
    yield server
    server.stop()


def player_arguments(request: pytest.FixtureRequest) -> tuple[str, ...]:
    """The test's ``player_args`` marker: more command-line arguments of the player."""
    marker = request.node.get_closest_marker("player_args")
    return tuple(marker.args) if marker else ()


def register_markers(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "player_args(*args): more command-line arguments of the player")


@pytest_asyncio.fixture
async def remote(player: PlayerProcess) -> AsyncIterator[Any]:
    """The test's remote control of the player (``player.attach_remote()``)."""
    control = await player.attach_remote()
    yield control
    await control.close()


@contextlib.asynccontextmanager
async def player_lifetime(process: PlayerProcess, processes: Callable[[], Awaitable[list[int]]]
                          ) -> AsyncIterator[PlayerProcess]:
    """The player once started; at the end it must exit 0 on SIGTERM and leave none of its
    ``processes`` (listed while it runs, after the test) behind."""
    listed: list[int] = []
    try:
        await asyncio.to_thread(process.wait_started)
        yield process
        listed = await processes()
    finally:
        asked = time.monotonic()
        status = await asyncio.to_thread(process.stop)
        took = time.monotonic() - asked
    assert status == 0, f"exit status {status} {took:.1f} s after SIGTERM:\n{process.log()}"
    assert listed and alive(listed) == [], f"left behind: {alive(listed)}"
