"""Fixtures: a shared backend process (reset before each test) and an admin client.

The tests import the package as ``tools.backend``; the repository root is put on sys.path so
that they also run with a plain ``pytest`` from any directory.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator

import aiohttp
import pytest
import pytest_asyncio
from support import REPO_ROOT, Admin, BackendProcess

if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


@pytest.fixture(scope="session")
def backend_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackendProcess]:
    """One server for the tests that need no special flags."""
    process = BackendProcess(tmp_path_factory.mktemp("backend"))
    yield process
    assert process.stop() == 0, process.stderr()


@pytest.fixture
def backend(backend_process: BackendProcess) -> BackendProcess:
    """The shared server, reset: no records, no faults, built-in users and scenarios."""
    backend_process.admin_sync("reset", {"users": True, "scenarios": True})
    return backend_process


@pytest_asyncio.fixture
async def admin(backend: BackendProcess) -> AsyncIterator[Admin]:
    """Admin client of the shared server."""
    async with aiohttp.ClientSession() as session:
        yield Admin(backend.base_url, session)


@pytest_asyncio.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    """A plain HTTP client session."""
    async with aiohttp.ClientSession() as session:
        yield session

