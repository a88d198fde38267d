"""The media process refuses what it cannot run: `unavailable` with a reason, then exit 69; a
control line that breaks the protocol closes the join. No network is used: each fails before
webrtcbin gathers a candidate."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tools.voice.driver import MediaProcess

PLUGINS = Path("/usr/lib/x86_64-linux-gnu/gstreamer-1.0")


def start(source: str, sink: str = "fakesink") -> dict:
    return {"type": "start", "source": source, "sink": sink, "echoCancel": False, "ice": [], "muted": False}


async def unavailable_reason(message: dict, env: dict | None = None) -> tuple[str, int]:
    media = await MediaProcess.start(env=env)
    try:
        await media.send(message)
        reply = await media.messages.wait_for(lambda m: m.get("type") in ("unavailable", "ready", "error"), 10)
        status = await media.wait_exit(5)
    finally:
        await media.kill()
    assert reply["type"] == "unavailable", (reply, media.stderr())
    return reply["reason"], status


def test_a_source_fragment_that_does_not_parse() -> None:
    reason, status = asyncio.run(unavailable_reason(start("nosuchelement is-live=true")))
    assert reason.startswith("source pipeline refused: "), reason
    assert "nosuchelement" in reason
    assert status == 69


def test_a_source_that_cannot_open() -> None:
    reason, status = asyncio.run(unavailable_reason(start("filesrc location=/nonexistent/voice.wav ! wavparse")))
    assert reason.startswith("source pipeline refused: "), reason
    assert status == 69


def test_a_source_that_is_not_audio() -> None:
    reason, status = asyncio.run(unavailable_reason(start("videotestsrc is-live=true")))
    assert reason == "source pipeline refused: its output is not raw audio"
    assert status == 69


def test_a_sink_fragment_that_does_not_parse() -> None:
    reason, status = asyncio.run(unavailable_reason(start("audiotestsrc is-live=true", sink="nosuchsink")))
    assert reason.startswith("sink pipeline refused: "), reason
    assert status == 69


@pytest.mark.parametrize("plugin, element", [("libgstopus.so", "opusenc"), ("libgstwebrtc.so", "webrtcbin")])
def test_a_missing_element(tmp_path: Path, plugin: str, element: str) -> None:
    """GStreamer sees every plugin of this machine but one (its own registry, in tmp_path)."""
    assert (PLUGINS / plugin).exists()
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    for library in PLUGINS.glob("*.so"):
        if library.name != plugin:
            (plugins / library.name).symlink_to(library)
    env = dict(os.environ, GST_PLUGIN_SYSTEM_PATH_1_0=str(plugins), GST_REGISTRY_1_0=str(tmp_path / "registry.bin"))
    env.pop("GST_PLUGIN_PATH_1_0", None)
    env.pop("GST_PLUGIN_PATH", None)
    reason, status = asyncio.run(unavailable_reason(start("audiotestsrc is-live=true"), env=env))
    assert reason == f"missing element {element}"
    assert status == 69


def test_a_line_that_is_not_json_ends_the_join() -> None:
    async def scenario() -> tuple[int, list]:
        media = await MediaProcess.start()
        try:
            media.writer.write(b"this is not json\n")
            await media.writer.drain()
            status = await media.wait_exit(5)
            await asyncio.wait_for(media.closed.wait(), 5)
        finally:
            await media.kill()
        return status, media.messages.items

    status, messages = asyncio.run(scenario())
    assert status == 1
    assert messages == []


def test_unknown_types_are_ignored_and_stop_exits_zero() -> None:
    async def scenario() -> tuple[int, str]:
        media = await MediaProcess.start()
        try:
            await media.send({"type": "renegotiate", "hint": 1})
            await media.send({"type": "stop", "reason": "leave"})
            status = await media.wait_exit(5)
        finally:
            await media.kill()
        return status, media.stderr()

    status, stderr = asyncio.run(scenario())
    assert status == 0
    assert "ignoring messages of unknown type renegotiate" in stderr
    assert "ignoring unknown field reason" in stderr
