"""Command line: port selection and port file, loopback only, signals, bad input."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO_ROOT, BackendProcess, RecordingClient


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """Run the backend expecting it to exit by itself."""
    return subprocess.run([sys.executable, "-m", "tools.backend", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)


def test_port_file_and_listening_line(tmp_path: Path) -> None:
    process = BackendProcess(tmp_path)
    try:
        assert process.base_url == f"http://127.0.0.1:{process.port}"
        assert process.port_file.read_text() == f"{process.port}\n"
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    finally:
        assert process.stop() == 0


def test_fixed_port(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = BackendProcess(tmp_path, ["--port", str(port)])
    try:
        assert process.base_url == f"http://127.0.0.1:{port}"
    finally:
        assert process.stop() == 0


def test_a_taken_port_is_an_error(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        result = run_cli("--port", str(holder.getsockname()[1]))
    assert result.returncode == 1 and "cannot listen" in result.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "example.com", "::"])
def test_only_loopback_hosts(host: str) -> None:
    result = run_cli("--host", host)
    assert result.returncode == 2 and "not a loopback address" in result.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["--ping-interval", "0"], "must be >= 1"),
        (["--ping-timeout", "-1"], "must be > 0"),
        (["--scenario", "/nonexistent.json"], "scenario /nonexistent.json"),
        (["--tls", "/nonexistent.pem", "/nonexistent.key"], "no such file"),
        (["--log-level", "loud"], "invalid choice"),
    ],
)
def test_bad_arguments(args: list[str], message: str) -> None:
    result = run_cli(*args)
    assert result.returncode == 2 and message in result.stderr


def test_bad_scenario_file_names_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"rooms": {"r": [{"at": -1, "event": "overlay", "payload": {}}]}}')
    result = run_cli("--scenario", str(path))
    assert result.returncode == 2 and "rooms.r[0]: at must be" in result.stderr


@pytest.mark.asyncio
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_signal_stops_with_status_0_and_clients_see_a_transport_loss(
    tmp_path: Path, signum: int
) -> None:
    process = BackendProcess(tmp_path)
    client = RecordingClient(process.base_url)
    try:
        await client.connect()
        await client.join("m1")
        assert process.stop(signum) == 0
        await client.wait_until(lambda: client.disconnect_reasons != [], timeout=10)
        assert client.disconnect_reasons == ["transport error"]
    finally:
        await client.close()
        process.stop()
