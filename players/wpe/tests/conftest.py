"""Fixtures of the host's tests: the test pages on a local HTTP server (127.0.0.1), the test clip,
and a headless wpe-host that must exit 0 on SIGTERM with none of its processes left (the
player's tests, in player/, have their own conftest.py)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

WPE_DIR = Path(__file__).resolve().parents[1]
if str(WPE_DIR) not in sys.path:
    sys.path.insert(0, str(WPE_DIR))

from host_support import TestPages, refused_port  # noqa: E402
from wpehost import REPO_ROOT, WpeHost, alive  # noqa: E402

CLIP = REPO_ROOT / ".cache" / "players" / "tv-clip.webm"


@pytest.fixture(scope="session")
def clip() -> Path:
    """The reference players' test clip (made by scripts/setup: players/shared/make-test-clip)."""
    if not CLIP.exists():
        pytest.fail(f"{CLIP} is missing: run scripts/setup")
    return CLIP


@pytest.fixture
def pages() -> Iterator[TestPages]:
    server = TestPages()
    yield server
    server.close()


@pytest.fixture
def closed_port() -> int:
    return refused_port()


@pytest_asyncio.fixture
async def host(clip: Path, tmp_path: Path) -> AsyncIterator[WpeHost]:
    """A headless host playing the clip; at the end SIGTERM must stop it with status 0 and
    leave none of its processes (WebKit's web and network processes) behind."""
    log = (tmp_path / "host.log").open("wb")
    running = await WpeHost.start(video=clip, stderr=log)
    processes: list[int] = []
    try:
        yield running
        processes = running.processes()
    finally:
        status = await running.stop()
        log.close()
    assert status == 0, (tmp_path / "host.log").read_text(errors="replace")
    assert alive(processes) == [], f"left behind: {alive(processes)}"
