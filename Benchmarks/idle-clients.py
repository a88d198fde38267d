"""RSS of the daemon holding many idle local clients, for one or more builds in the same run.

  python3 Benchmarks/idle-clients.py NAME=PATH [NAME=PATH ...] [--clients 1000]

Each build is started on its own socket and state directory (maxClients raised to fit), reaches
its idle RSS, then takes `--clients` connections that each make one `daemon.hello` and stay idle;
the figure is the RSS then and the cost per client.
"""
import argparse
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from benchlib.procfs import rss_kib


def measure(name, binary, clients):
    work = tempfile.mkdtemp(prefix="idle-clients-", dir="/tmp")
    path = os.path.join(work, "d.sock")
    config = os.path.join(work, "config.json")
    with open(config, "w") as file:
        file.write('{"maxClients": %d}' % (clients + 16))
    daemon = subprocess.Popen([binary, "--socket", path, "--state-directory", os.path.join(work, "state"),
                               "--config", config, "--log-target", "stderr"], stderr=subprocess.DEVNULL)
    held = []
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(path):
            if time.monotonic() > deadline or daemon.poll() is not None:
                sys.exit(f"{name}: the daemon did not start")
            time.sleep(0.05)
        time.sleep(0.5)
        idle = rss_kib(daemon.pid)
        for _ in range(clients):
            client = socket.socket(socket.AF_UNIX)
            client.settimeout(10)
            client.connect(path)
            client.sendall(b'{"jsonrpc":"2.0","id":1,"method":"daemon.hello"}\n')
            held.append(client)
        for client in held:
            if b'"result"' not in client.recv(65536):
                sys.exit(f"{name}: a client got no hello")
        time.sleep(0.5)
        loaded = rss_kib(daemon.pid)
        print(f"{name}: idle {idle / 1024:.1f} MiB; with {clients} idle clients {loaded / 1024:.1f} MiB "
              f"({(loaded - idle) / clients:.1f} KiB per client)", flush=True)
        print(f"figure {name}.rss_idle_clients_mib {loaded / 1024:.1f}")
        print(f"figure {name}.kib_per_idle_client {(loaded - idle) / clients:.1f}")
    finally:
        for client in held:
            client.close()
        daemon.terminate()
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("builds", nargs="+", help="NAME=PATH of a built interactived")
    parser.add_argument("--clients", type=int, default=1000)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.clients + 256)), hard))
    for spec in args.builds:
        name, _, path = spec.partition("=")
        if not name or not os.access(path, os.X_OK):
            sys.exit(f"idle-clients: {spec} is not NAME=PATH of an executable")
        measure(name, path, args.clients)


if __name__ == "__main__":
    main()
