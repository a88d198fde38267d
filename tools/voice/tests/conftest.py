"""The voice lab's tests run the real media process (``swift build --product
interactived-voice`` first) against Debian's Janus and aiortc peers in network namespaces they
create (root only: the tests that need them are skipped with the reason otherwise)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tools.voice.driver import media_binary  # noqa: E402
from tools.voice.janus import JanusServer, janus_available  # noqa: E402
from tools.voice.netns import VoiceNetwork, is_root  # noqa: E402

needs_network = pytest.mark.skipif(not is_root(), reason="network namespaces need root (ip netns add)")


@pytest.fixture(scope="session", autouse=True)
def built_media_process() -> Path:
    binary = media_binary()
    assert binary.exists(), f"{binary} is missing: run `swift build --product interactived-voice` first"
    return binary


@pytest.fixture
def network() -> Iterator[VoiceNetwork]:
    with VoiceNetwork() as net:
        yield net


@pytest.fixture
def janus(network: VoiceNetwork) -> Iterator[JanusServer]:
    reason = janus_available()
    assert reason is None, reason
    with JanusServer(network) as server:
        yield server
