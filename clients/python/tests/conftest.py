"""Fixtures: the real daemon (a fresh one per test) and, for the answer flow, the reference
backend. The library is imported from this checkout, not from an installed copy."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

CLIENT_ROOT = Path(__file__).resolve().parents[1]
REPO_ROOT = CLIENT_ROOT.parents[1]
for path in (CLIENT_ROOT, REPO_ROOT):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from tools.backend.tests.support import BackendProcess  # noqa: E402
from tools.testsupport.daemon import DaemonProcess  # noqa: E402


@pytest.fixture
def daemon() -> Iterator[DaemonProcess]:
    """A daemon with no configuration file (nothing to connect to)."""
    process = DaemonProcess()
    yield process
    assert process.stop() == 0


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[BackendProcess]:
    """The reference backend on a free port."""
    process = BackendProcess(tmp_path)
    yield process
    assert process.stop() == 0, process.stderr()


@pytest.fixture
def live_daemon(backend: BackendProcess) -> Iterator[DaemonProcess]:
    """A daemon configured for the reference backend (tenant onlivev2, os linuxstb)."""
    process = DaemonProcess(["--socket-url", backend.base_url, "--api-url", backend.base_url,
                             "--tenant", "onlivev2", "--os", "linuxstb"])
    yield process
    assert process.stop() == 0
