"""Run by test_player_isolation.py as another local user (``nobody``): what that user can do to
the player's browser. One JSON argument: ``inodes`` (the browser's listening TCP sockets, as the
test found them: what the user would find by trying ports), ``pids`` (the browser's processes)
and ``socket`` (the player's DevTools socket, or ""). Prints a JSON object:

- ``ports``: the addresses of those sockets the user reads in /proc/net/tcp and tcp6;
- ``devtools``: those of them that answered ``GET /json/version`` as DevTools does;
- ``socket``: what the player's DevTools socket did with ``Browser.getVersion``: "spoke
  DevTools", "closed" (the connection, unanswered), or the error connecting to it;
- ``descriptors``: for each browser process's fds 3 and 4 (the DevTools pipe), "opened" or the
  error opening it.

Standard library only; run with ``python3 -I -c`` (the file need not be readable by the user).
"""

import json
import socket
import sys


def addresses(inodes):
    found = []
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:
                    port = int(fields[1].rsplit(":", 1)[1], 16)
                    found.append(("127.0.0.1" if family == socket.AF_INET else "::1", port))
    return found


def speaks_devtools(host, port):
    reply = b""
    try:
        with socket.create_connection((host, port), timeout=5) as connection:
            connection.sendall(f"GET /json/version HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            while b"webSocketDebuggerUrl" not in reply and len(reply) < 65536:
                chunk = connection.recv(4096)
                if not chunk:
                    break
                reply += chunk
    except OSError:  # refused, reset, or no answer within 5 s
        pass
    return b"webSocketDebuggerUrl" in reply


def try_socket(path):
    if not path:
        return ""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(5)
            connection.connect(path)
            connection.sendall(b'{"id":1,"method":"Browser.getVersion"}\0')
            reply = b""
            while b"\0" not in reply:
                chunk = connection.recv(4096)
                if not chunk:
                    return "closed"
                reply += chunk
        return "spoke DevTools" if b'"product"' in reply else "answered"
    except (ConnectionResetError, BrokenPipeError):
        return "closed"
    except OSError as error:
        return type(error).__name__


def try_descriptor(path):
    try:
        with open(path, "wb"):
            return "opened"
    except OSError as error:
        return type(error).__name__


def main():
    request = json.loads(sys.argv[1])
    ports = addresses(set(request["inodes"]))
    print(json.dumps({
        "ports": [f"{host}:{port}" for host, port in ports],
        "devtools": [f"{host}:{port}" for host, port in ports if speaks_devtools(host, port)],
        "socket": try_socket(request["socket"]),
        "descriptors": {f"{pid}/{fd}": try_descriptor(f"/proc/{pid}/fd/{fd}")
                        for pid in request["pids"] for fd in (3, 4)},
    }))


main()
