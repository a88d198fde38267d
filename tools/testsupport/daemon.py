"""The real ``interactived`` binary as a subprocess on a temporary socket and state directory
(the Python counterpart of Tests/IntegrationTests/Support/DaemonProcess.swift)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

from tools.testsupport.processes import stop_process

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 20.0


def built_products() -> Path:
    """The folder of the built executables: ``$INTERACTIVED_BIN_DIR``, else what
    ``swift build --show-bin-path`` says (the daemon must be built already)."""
    if os.environ.get("INTERACTIVED_BIN_DIR"):
        return Path(os.environ["INTERACTIVED_BIN_DIR"])
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    output = subprocess.run([swift, "build", "--show-bin-path"], cwd=REPO_ROOT, check=True,
                            capture_output=True, text=True, timeout=120).stdout
    return Path(output.strip())


class DaemonProcess:
    """``interactived --socket … --state-directory … --config /nonexistent.json [args]``.

    The socket lives in a short temporary folder (Unix socket paths are limited to 107 bytes).
    ``stop()`` sends SIGTERM and returns the exit status; it kills after a bounded wait.
    """

    def __init__(self, arguments: Sequence[str] = (), binary: Optional[Path] = None) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="icpy-", dir="/tmp"))
        self.socket_path = str(self.directory / "d.sock")
        self.log_path = self.directory / "daemon.log"
        self._command = [str(binary or built_products() / "interactived"), "--socket", self.socket_path,
                         "--state-directory", str(self.directory / "state"), "--config",
                         "/nonexistent.json", "--log-target", "stderr", *arguments]
        self._log = self.log_path.open("ab")
        self._start()

    def _start(self) -> None:
        environment = {key: value for key, value in os.environ.items()
                       if key not in ("NOTIFY_SOCKET", "JOURNAL_STREAM", "LISTEN_FDS", "LISTEN_PID",
                                      "WATCHDOG_USEC", "WATCHDOG_PID", "INTERACTIVED_SOCKET",
                                      "INTERACTIVED_CONFIG")}
        self.process = subprocess.Popen(self._command, env=environment, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=self._log)
        try:
            self._wait_listening()
        except BaseException:
            self.stop()
            raise

    def restart(self, timeout: float = 10.0) -> int:
        """Stops the daemon (SIGTERM, bounded wait) and starts it again on the same socket and
        state directory: a new boot. Returns the first run's exit status."""
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout)
        self._start()
        return status

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"interactived exited with {self.process.returncode}:\n{self.log()}")
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                try:
                    probe.connect(self.socket_path)
                    return
                except OSError:
                    pass
            time.sleep(0.05)
        raise RuntimeError(f"interactived did not listen within {START_TIMEOUT}s:\n{self.log()}")

    def log(self) -> str:
        """What the daemon wrote to stderr so far."""
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout: float = 10.0) -> Optional[int]:
        """SIGTERM, a bounded wait (then SIGKILL), the temporary folder removed; the status."""
        status = stop_process(self.process, timeout)
        self._log.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        return status
