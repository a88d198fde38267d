"""Writes a symbol order for interactived: the functions that run when it starts, joins a live
room, shows overlays and serves the local API, for lld's --symbol-ordering-file. The committed
linker/interactived.order is made with it (linker/update-order.sh).

Runs the given daemon (a release build) under valgrind's callgrind against
Benchmarks/e2e_sender.py (a python-socketio server on 127.0.0.1): READY=1, events.subscribe,
room.join, tracked overlays for two seconds, daemon.status, SIGTERM. Every function of the
binary callgrind saw executed is written once, in the order callgrind lists them.

Usage: python3 linker/generate-order.py --daemon PATH --out FILE
       (about a minute; needs valgrind and python-socketio)
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wait_line(stream, prefix, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        if line.startswith(prefix):
            return line
    raise RuntimeError(f"no {prefix!r} line within {timeout} s")


def rpc(sock_file, method, params, request_id):
    sock_file.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n")
    sock_file.flush()
    while True:
        line = sock_file.readline()
        if not line:
            raise RuntimeError(f"{method}: the daemon closed the connection")
        message = json.loads(line)
        if message.get("id") == request_id:
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            return message["result"]


def executed_functions(callgrind_output, binary_name):
    """Names under `fn=` while the current object (`ob=`) is the binary; addresses skipped."""
    names, seen, current_object = [], set(), None
    with open(callgrind_output, errors="replace") as output:
        for line in output:
            if line.startswith("ob="):
                current_object = line[3:].strip()
            elif line.startswith("fn=") and current_object and current_object.endswith("/" + binary_name):
                name = line[3:].strip().rsplit("'", 1)[0]  # callgrind marks recursion levels as name'2
                if name and not name.startswith("0x") and name not in seen:
                    seen.add(name)
                    names.append(name)
    return names


def main():
    parser = argparse.ArgumentParser(description="Writes interactived's symbol order from a profile.")
    parser.add_argument("--daemon", required=True, help="the release interactived to profile")
    parser.add_argument("--out", required=True, help="the order file to write")
    args = parser.parse_args()
    for tool in ("valgrind", "strip"):
        if shutil.which(tool) is None:
            sys.exit(f"generate-order: needs {tool} (apt-get install valgrind binutils)")
    work = tempfile.mkdtemp(prefix="interactived-order-")
    sender = daemon = None
    try:
        # valgrind cannot read the DWARF of the toolchain's clang; the symbol table is enough.
        binary = os.path.join(work, "interactived")
        subprocess.run(["strip", "--strip-debug", "-o", binary, args.daemon], check=True)
        sender = subprocess.Popen([sys.executable, os.path.join(ROOT, "Benchmarks", "e2e_sender.py"), "--port", "0"],
                                  stdout=subprocess.PIPE, text=True)
        base = f"http://127.0.0.1:{wait_line(sender.stdout, 'READY', 20).split()[1]}"
        notify_path = os.path.join(work, "notify.sock")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        notify.settimeout(120)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LISTEN_", "JOURNAL_", "WATCHDOG_"))}
        env.update(NOTIFY_SOCKET=notify_path, INTERACTIVED_CONFIG=os.path.join(work, "absent.json"))
        socket_path = os.path.join(work, "d.sock")
        profile = os.path.join(work, "callgrind.out")
        daemon = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no", "--compress-pos=no",
             f"--callgrind-out-file={profile}", binary, "--socket-url", base, "--api-url", base, "--tenant", "bench",
             "--os", "linuxstb", "--socket", socket_path, "--state-directory", os.path.join(work, "state"),
             "--log-target", "stderr"], env=env, stderr=subprocess.DEVNULL)
        while b"READY=1" not in notify.recv(4096):
            pass
        subscriber = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        subscriber.connect(socket_path)
        events = subscriber.makefile("rw")
        rpc(events, "events.subscribe", {}, 1)
        control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        control.connect(socket_path)
        calls = control.makefile("rw")
        if rpc(calls, "room.join", {"mediaId": "bench"}, 1).get("state") != "joined":
            raise RuntimeError("room.join did not join")
        run = json.dumps({"room": "bench", "rate": 20, "seconds": 2, "tag": "order", "tracked": True}).encode()
        request = urllib.request.Request(base + "/bench/run", data=run, headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=60).read()
        rpc(calls, "daemon.status", {}, 2)
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=120)
        names = executed_functions(profile, "interactived")
        if len(names) < 500:
            raise RuntimeError(f"only {len(names)} functions seen; the profile looks incomplete")
        with open(args.out, "w") as order:
            order.write("# Generated by linker/generate-order.py; see linker/README.md.\n")
            order.write("\n".join(names) + "\n")
        print(f"generate-order: {len(names)} functions written to {args.out}")
    finally:
        for child in (daemon, sender):
            if child is not None and child.poll() is None:
                child.kill()
                child.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
