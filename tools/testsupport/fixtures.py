"""pytest fixtures shared by the Python test suites (clients/python, players/web): the
reference backend on a free port and a daemon configured for it. A suite's conftest.py imports
the ones it uses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.backend.tests.support import BackendProcess
from tools.testsupport.daemon import DaemonProcess


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
