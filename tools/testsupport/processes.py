"""Stopping a process the tests started: a signal, a bounded wait, then SIGKILL."""

from __future__ import annotations

import signal
import subprocess
from typing import Optional


def stop_process(process: subprocess.Popen, timeout: float, signum: int = signal.SIGTERM) -> Optional[int]:
    """Sends ``signum`` unless the process already ended, waits at most ``timeout`` seconds,
    kills it if it is still running; returns its exit status."""
    if process.poll() is None:
        process.send_signal(signum)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
    return process.returncode
