"""The command line and the run of a reference player, whatever its engine: the options both
players take, the daemon connection (again after each loss), and the wait for SIGTERM or SIGINT
(exit status 0) or for the engine to go away (1)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Optional

import interactived_client
from interactived_client import ConnectionClosed, DaemonError

from .engine import Engine
from .player import Player
from .screenshots import Screenshots

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_VIDEO = REPO_ROOT / ".cache" / "players" / "tv-clip.webm"
# The device values a real video SDK generates after its licence check; these stand in for them.
DEMO_UNION_INFO = "webplayer-union-0001"
DEMO_DRM_KEK = "webplayer-kek-0001"
RECONNECT_DELAY = 1.0
REFUSED_DELAY = 10.0
# How long the daemon connection's tasks have to end once cancelled by the stop.
CANCEL_TIMEOUT = 10.0
log = logging.getLogger("player")


def parser(description: str) -> argparse.ArgumentParser:
    """The options every reference player takes; a player adds its engine's own."""
    options = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    options.add_argument("--socket", help="the daemon's socket (default: $INTERACTIVED_SOCKET, "
                         "/run/interactived/interactived.sock, $XDG_RUNTIME_DIR/interactived.sock)")
    options.add_argument("--screenshot-dir", type=Path, help="write a PNG of the screen after each "
                         "overlay.reveal, overlay.post and dialog, named NNNN-what-OVERLAYID.png")
    options.add_argument("--video", type=Path, default=DEFAULT_VIDEO,
                         help=f"the clip to play in a loop (default: {DEFAULT_VIDEO}, made by scripts/setup)")
    options.add_argument("--size", default="1280x720", help="headless screen size, WIDTHxHEIGHT")
    options.add_argument("--headless", action="store_true", help="headless even with $DISPLAY")
    options.add_argument("--load-timeout", type=float, default=20.0,
                         help="seconds before an overlay that did not load is reported failed")
    options.add_argument("--silent-page-timeout", type=float, default=30.0,
                         help="seconds after which a loaded overlay that never expires (durationSec 0) and "
                         "never said it is ready is dismissed")
    options.add_argument("--autopilot", action="store_true", help="play the viewer for a demo: "
                         "Enter on revealed overlays and dialogs, tap lit predict/lucky buttons")
    options.add_argument("--play", nargs=2, metavar=("FILM", "EPISODE"),
                         help="start this episode (playback.start) once connected; each ended episode starts the next")
    options.add_argument("--union-info", default=DEMO_UNION_INFO,
                         help="the SDK's device id sent with playback.start (default: a demo value)")
    options.add_argument("--drm-kek", default=DEMO_DRM_KEK,
                         help="the SDK's device key sent with playback.start (default: a demo value)")
    options.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return options


def parse(options: argparse.ArgumentParser) -> argparse.Namespace:
    """The parsed command line, with ``width``, ``height`` and ``play_at_start`` (None or
    (film, episode)); logging set up."""
    parsed = options.parse_args()
    try:
        width, height = (int(part) for part in parsed.size.lower().split("x"))
    except ValueError:
        options.error("--size must be WIDTHxHEIGHT, e.g. 1280x720")
    parsed.width, parsed.height = width, height
    parsed.play_at_start = None
    if parsed.play:
        film, episode = parsed.play
        if not episode.isdigit() or int(episode) < 1:
            options.error("--play FILM EPISODE: EPISODE must be a whole number >= 1")
        parsed.play_at_start = (film, int(episode))
    logging.basicConfig(level=parsed.log_level.upper(), format="[player] %(message)s", stream=sys.stderr)
    return parsed


def make_player(engine: Engine, options: argparse.Namespace) -> Player:
    """The player on ``engine`` as the command line says."""
    screenshots = Screenshots(options.screenshot_dir) if options.screenshot_dir else None
    device = {"unionInfo": options.union_info, "drmKek": options.drm_kek}
    return Player(engine, screenshots, options.load_timeout, options.autopilot, device,
                  options.play_at_start, options.silent_page_timeout)


def stop_signals() -> asyncio.Event:
    """An event set by SIGTERM or SIGINT."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    return stop


async def follow_daemon(player: Player, socket: Optional[str], client_name: str) -> None:
    """Connects (again after each loss, every second; ten seconds after a refusal) and runs the
    player on the connection."""
    while True:
        try:
            client = await interactived_client.connect(socket, client=client_name)
        except OSError as error:
            log.warning("cannot reach the daemon (%s); trying again", error)
            await asyncio.sleep(RECONNECT_DELAY)
            continue
        log.info("connected to interactived %s (boot %s)", client.hello.get("version"),
                 client.hello.get("bootId"))
        delay = RECONNECT_DELAY
        try:
            await player.run(client)
        except ConnectionClosed as error:
            log.warning("the daemon connection ended: %s", error)
        except DaemonError as error:  # e.g. PermissionDenied: the player needs the control role
            log.error("the daemon refused the player: %s", error)
            delay = REFUSED_DELAY
        finally:
            await client.close()
        await asyncio.sleep(delay)


def awaiting(task: asyncio.Task) -> str:
    """Where a suspended task waits: its chain of awaits, outermost first."""
    places, awaitable = [], task.get_coro()
    while awaitable is not None:
        prefix = next((p for p in ("cr", "ag", "gi") if hasattr(awaitable, f"{p}_frame")), None)
        frame = getattr(awaitable, f"{prefix}_frame") if prefix else None
        if frame is None:
            break
        places.append(f"{frame.f_code.co_name} ({Path(frame.f_code.co_filename).name}:{frame.f_lineno})")
        awaitable = getattr(awaitable, "gi_yieldfrom" if prefix == "gi" else f"{prefix}_await")
    return " > ".join(places) or repr(task)


async def run(player: Player, options: argparse.Namespace, client_name: str, stop: asyncio.Event,
              engine_gone: asyncio.Event, engine_name: str) -> int:
    """Follows the daemon until ``stop`` (0) or ``engine_gone`` (1, logged)."""
    running = [asyncio.create_task(follow_daemon(player, options.socket, client_name)),
               asyncio.create_task(stop.wait()), asyncio.create_task(engine_gone.wait())]
    done, pending = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    if pending:
        _, stuck = await asyncio.wait(pending, timeout=CANCEL_TIMEOUT)
        for task in stuck:  # a bug (a lost cancellation): logged with where it waits; the stop goes on
            log.error("still running %.0f s after it was cancelled, at %s", CANCEL_TIMEOUT, awaiting(task))
    if running[2] in done and not stop.is_set():
        log.error("the %s went away", engine_name)
        return 1
    if stop.is_set():
        log.info("stopping: the %s is closed", engine_name)
    for task in done:
        if task is running[0] and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
    return 0
