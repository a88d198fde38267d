"""interactived under test: started on its own socket and state directory with a NOTIFY_SOCKET
of the benchmark's, waited for until READY=1, spoken to through its local API."""
import json
import os
import socket
import subprocess
import time

from .children import stop


def daemon_environment(notify_path, work):
    """The caller's environment minus anything systemd or a session would hand the daemon, with
    our NOTIFY_SOCKET and a configuration file that does not exist (the defaults)."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "JOURNAL_STREAM", "WATCHDOG_USEC",
                          "WATCHDOG_PID", "INTERACTIVED_SOCKET", "NOTIFY_SOCKET")}
    env["NOTIFY_SOCKET"] = notify_path
    env["INTERACTIVED_CONFIG"] = os.path.join(work, "absent-config.json")
    return env


def notify_socket(path, timeout):
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(path)
    notify.settimeout(timeout)
    return notify


def wait_ready(notify, process):
    """Reads datagrams until READY=1 (bounded by the socket's timeout)."""
    while True:
        try:
            datagram = notify.recv(4096)
        except socket.timeout:
            raise RuntimeError(f"no READY=1 (daemon exit status {process.poll()})")
        if b"READY=1" in datagram:
            return


class Daemon:
    """One interactived pointed at `backend_url` (Socket.IO and REST), started in `run_dir` and
    waited for until READY=1. `prefix` goes before the binary (valgrind's argv). Its notification
    socket stays open until `stop` (STATUS= datagrams keep coming; the daemon never waits on them)."""

    def __init__(self, binary, run_dir, backend_url, tenant="bench", prefix=(), ready_timeout=30):
        os.makedirs(run_dir, exist_ok=True)
        self.socket_path = os.path.join(run_dir, "d.sock")
        self.stderr_path = os.path.join(run_dir, "daemon.stderr")
        self.notify = notify_socket(os.path.join(run_dir, "notify.sock"), ready_timeout)
        argv = [*prefix, binary, "--socket-url", backend_url, "--api-url", backend_url, "--tenant", tenant,
                "--os", "linuxstb", "--socket", self.socket_path, "--state-directory", os.path.join(run_dir, "state"),
                "--log-target", "stderr"]
        with open(self.stderr_path, "w") as stderr:
            self.process = subprocess.Popen(argv, env=daemon_environment(self.notify.getsockname(), run_dir),
                                            stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            wait_ready(self.notify, self.process)
        except BaseException:
            self.stop()
            raise

    @property
    def pid(self):
        return self.process.pid

    def connect(self):
        return LocalAPI(self.socket_path)

    def log_lines(self):
        with open(self.stderr_path, errors="replace") as handle:
            return handle.read().splitlines()

    def stop(self, timeout=20):
        stop(self.process, timeout)
        self.notify.close()


class LocalAPI:
    """One JSON-lines connection to the daemon's local API."""

    def __init__(self, path, timeout=20):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.file = self.sock.makefile("rw")
        self.next_id = 0

    def call(self, method, params, timeout=20):
        """The result of one request (skipping events and other replies); raises on an error
        reply, a closed connection or no reply within `timeout` seconds."""
        self.next_id += 1
        request_id = self.next_id
        self.file.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n")
        self.file.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.file.readline()
            if not line:
                raise RuntimeError(f"{method}: the daemon closed the connection")
            message = json.loads(line)
            if message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
        raise RuntimeError(f"{method}: no reply within {timeout} s")

    def close(self):
        self.sock.close()


def login_and_join(api, media_id, mode=None):
    """A viewer logged in (alice, as the reference backend knows her) and room `media_id` joined,
    as a player does on a real deployment."""
    api.call("session.login", {"token": "token-alice", "userId": "alice", "displayName": "Alice"})
    params = {"mediaId": media_id} if mode is None else {"mediaId": media_id, "mode": mode}
    joined = api.call("room.join", params)
    if joined.get("state") != "joined":
        raise RuntimeError(f"room.join {media_id}: {joined}")
    return joined
