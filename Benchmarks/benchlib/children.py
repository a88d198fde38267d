"""Child processes of the benchmarks: started, waited for, driven and stopped by their PID."""
import json
import os
import select
import signal
import subprocess
import threading
import time
import urllib.request


def stop(process, timeout=20):
    """SIGTERM, then SIGKILL after `timeout` seconds; always reaps. Nothing for None or a
    process that already ended."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def start_until_line(argv, marker, timeout, cwd=None):
    """Starts `argv` and waits until it prints a line containing `marker` (e2e_sender.py's
    READY, tools.backend's address); returns (process, that line). Its output is drained after
    that so the child never blocks on a full pipe."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd, env=env)
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if marker in line:
            threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
            return process, line
    stop(process)
    raise RuntimeError(f"{argv[0]}…: no {marker!r} within {timeout} s: {''.join(seen)[-2000:]}")


class CommandChild:
    """A child driven by commands on its stdin, each answered by one JSON line on its stdout
    (ipc-bench subscribe, e2e_pyclient.py, burst_sender)."""

    def __init__(self, name, argv, cwd=None, env=None, stderr=None):
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=cwd,
                                     env=env, text=True, bufsize=1)

    @property
    def pid(self):
        return self.proc.pid

    def expect(self, word, timeout):
        """The first line starting with `word` (earlier lines are skipped), within `timeout` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = self.proc.stdout.readline()
            if not line:
                break
            if line.startswith(word):
                return line.strip()
        raise RuntimeError(f"{self.name}: no {word} within {timeout} s (exit {self.proc.poll()})")

    def send(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def read_json(self, timeout):
        """The next line, decoded, within `timeout` seconds."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            raise RuntimeError(f"{self.name}: no answer within {timeout} s (exit {self.proc.poll()})")
        return json.loads(line)

    def ask(self, command, timeout=10):
        self.send(command)
        return self.read_json(timeout)

    def stop(self):
        """`quit`, then SIGKILL if it has not ended within 5 s."""
        if self.proc.poll() is None:
            try:
                self.send("quit")
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(timeout=5)


def http_json(url, body=None, timeout=30):
    """GET `url` (POST `body` as JSON when given) and decode the JSON reply."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return json.loads(reply.read())
