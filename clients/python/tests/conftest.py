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

from tools.testsupport.daemon import DaemonProcess  # noqa: E402
from tools.testsupport.fixtures import backend, live_daemon  # noqa: E402,F401  (fixtures)


@pytest.fixture
def daemon() -> Iterator[DaemonProcess]:
    """A daemon with no configuration file (nothing to connect to)."""
    process = DaemonProcess()
    yield process
    assert process.stop() == 0

