"""Command line and assembly: one aiohttp app on one loopback port serving Socket.IO
(``/socket.io/``), the REST API (``/api/``), the playback API (``/v1/``), the leaderboard, the templates (``/templates/``)
and the admin API (``/_admin/``), over HTTP or, with ``--tls``, HTTPS/WSS.

Once listening it writes ``--port-file`` (atomically) and prints one line,
``backend listening on http://127.0.0.1:PORT``. SIGTERM and SIGINT stop it with status 0;
open WebSocket connections are then aborted, so clients see a transport loss.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import os
import signal
import ssl
import sys
from collections.abc import Sequence
from pathlib import Path

import socketio
from aiohttp import web

from .admin import AdminApi
from .emits import Emitter
from .playback import PlaybackApi
from .rest import RestApi
from .scenario import RoomTimelines, Scenario, load_scenario
from .sio_handlers import SocketHandlers
from .state import BackendState
from .transport import ConnectionRegistry, install, refusal_middleware

log = logging.getLogger("backend")

LOG_LEVELS = ("debug", "info", "warning", "error")


def loopback_host(value: str) -> str:
    """argparse type: a loopback address (``localhost`` means 127.0.0.1)."""
    if value == "localhost":
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(value).is_loopback:
            return value
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"{value!r} is not a loopback address; this is a test peer")


def positive_int(value: str) -> int:
    """argparse type: an integer >= 1."""
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return number


def positive_float(value: str) -> float:
    """argparse type: a number > 0."""
    number = float(value)
    if number <= 0:
        raise argparse.ArgumentTypeError("must be > 0")
    return number


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line (docs/backend.md lists every flag)."""
    parser = argparse.ArgumentParser(
        prog="python3 -m tools.backend",
        description="Reference Interactive backend for interactived (test peer and demo).",
    )
    parser.add_argument("--host", type=loopback_host, default="127.0.0.1",
                        help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0,
                        help="TCP port; 0 picks a free one (default 0)")
    parser.add_argument("--port-file", type=Path,
                        help="write the chosen port here once listening (atomic rename)")
    parser.add_argument("--scenario", type=Path,
                        help="scenario JSON file: timed room emits, VOD scenarios, users")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), type=Path,
                        help="serve HTTPS/WSS with this PEM certificate and key")
    parser.add_argument("--ping-interval", type=positive_int, default=25,
                        help="Engine.IO pingInterval in whole seconds (default 25)")
    parser.add_argument("--ping-timeout", type=positive_float, default=20.0,
                        help="Engine.IO pingTimeout in seconds (default 20)")
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="info",
                        help="stderr log level (default info); debug adds Socket.IO traffic")
    return parser.parse_args(argv)


class Backend:
    """The assembled server: state, Socket.IO, REST, admin API and scenario timelines."""

    def __init__(self, options: argparse.Namespace, scenario: Scenario) -> None:
        self._options = options
        debug = options.log_level == "debug"
        self.state = BackendState(file_users=scenario.users, file_vod=scenario.vod)
        self.sio = socketio.AsyncServer(
            async_mode="aiohttp",
            cors_allowed_origins="*",
            # One event at a time, in arrival order, so the records keep the client's order.
            async_handlers=False,
            ping_interval=options.ping_interval,
            ping_timeout=options.ping_timeout,
            logger=debug,
            engineio_logger=debug,
        )
        self.connections = ConnectionRegistry()
        install(self.sio.eio, self.connections)
        emitter = Emitter(self.sio, self.state)
        self.timelines = RoomTimelines(scenario.rooms, emitter, lambda: self.state.base_url)
        rest = RestApi(self.state)
        # Request bodies up to 64 MiB: a test may store a VOD scenario of several megabytes.
        self.app = web.Application(middlewares=[refusal_middleware(self.state), rest.middleware],
                                   client_max_size=64 << 20)
        self.sio.attach(self.app, socketio_path="socket.io")
        SocketHandlers(self.sio, self.state, self.timelines).register()
        rest.register(self.app)
        PlaybackApi(self.state).register(self.app)
        info = {
            "pingInterval": options.ping_interval,
            "pingTimeout": options.ping_timeout,
            "tls": options.tls is not None,
            "scenarioFile": str(options.scenario) if options.scenario else None,
        }
        AdminApi(self.state, self.sio, emitter, self.connections, self.timelines, info).register(
            self.app
        )
        self._runner = web.AppRunner(
            self.app, access_log=logging.getLogger("aiohttp.access") if debug else None,
            shutdown_timeout=2.0,
        )

    async def start(self) -> str:
        """Listen and return the base URL (``http(s)://HOST:PORT``)."""
        ssl_context = None
        if self._options.tls:
            cert, key = self._options.tls
            ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ssl_context.load_cert_chain(cert, key)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._options.host, self._options.port,
                           ssl_context=ssl_context)
        await site.start()
        port = self._runner.addresses[0][1]
        host = self._options.host
        host = f"[{host}]" if ":" in host else host
        scheme = "https" if ssl_context else "http"
        self.state.base_url = f"{scheme}://{host}:{port}"
        return self.state.base_url

    @property
    def port(self) -> int:
        """The port listened on (after ``start``)."""
        return self._runner.addresses[0][1]

    async def stop(self) -> None:
        """Stop timelines, abort WebSocket connections, stop Socket.IO and the web server."""
        await self.timelines.stop()
        for connection in self.connections.all():
            connection.drop("eof")
        await self.sio.shutdown()
        await self._runner.cleanup()


def write_port_file(path: Path, port: int) -> None:
    """Write ``port`` to ``path`` atomically (a temporary file renamed over it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(f"{port}\n", encoding="ascii")
    os.replace(tmp, path)


async def serve(options: argparse.Namespace, scenario: Scenario) -> int:
    """Run until SIGTERM or SIGINT; the exit status."""
    backend = Backend(options, scenario)
    try:
        base_url = await backend.start()
    except (OSError, ssl.SSLError) as exc:
        print(f"error: cannot listen: {exc}", file=sys.stderr)
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # A parent may have spawned us with these signals blocked (Swift's Foundation.Process does,
    # from a dispatch thread); a test peer that cannot be stopped would hang its test run.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    if options.port_file:
        write_port_file(options.port_file, backend.port)
    print(f"backend listening on {base_url}", flush=True)
    await stop.wait()
    log.info("stopping")
    await backend.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m tools.backend``: parse flags, load the scenario, serve."""
    options = parse_args(argv)
    logging.basicConfig(
        level=options.log_level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if options.log_level != "debug":
        # aiohttp logs every ignored WebSocket error at INFO; keep stderr about the backend.
        logging.getLogger("aiohttp").setLevel(logging.WARNING)
    try:
        scenario = load_scenario(options.scenario) if options.scenario else Scenario({}, {}, {})
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if options.tls:
        for path in options.tls:
            if not path.is_file():
                print(f"error: --tls: no such file {path}", file=sys.stderr)
                return 2
    return asyncio.run(serve(options, scenario))
