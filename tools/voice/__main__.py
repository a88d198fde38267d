"""``python3 -m tools.voice lab``: a voice room for the daemon's integration tests and the demo
(README.md, lab.py): the namespaces, Janus, friends in a room and a cuttable proxy in front of
Janus, driven by JSON commands on standard input until it closes or SIGTERM.

``python3 -m tools.voice friend``: one friend in a room, in a process of its own (run it in the
box namespace: ``ip netns exec``), until SIGTERM (it leaves) or SIGKILL (it vanishes without a
word, as a crashed peer does); prints ``{"display", "id"}`` once it joined."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import threading
from typing import Any

from .janus import JanusServer
from .lab import Lab, friend_track
from .netns import VoiceNetwork
from .peer import AudioBridgePeer
from .scenario import ROOM_SETTINGS

_output = threading.Lock()


def emit(message: dict[str, Any]) -> None:
    with _output:
        print(json.dumps(message), flush=True)


def lab(arguments: argparse.Namespace) -> None:
    with VoiceNetwork() as net, JanusServer(net, session_timeout=arguments.session_timeout, api_secret=arguments.api_secret,
                                            reclaim_session_timeout=arguments.reclaim_timeout) as janus:
        ready = {"janus": janus.url, "room": arguments.room, "boxNamespace": net.box,
                 "serverAddress": net.server_address, "boxAddress": net.box_address}
        room = Lab(net, janus, arguments.room, arguments.friend, arguments.pin, emit)
        finished = threading.Event()

        async def main() -> None:
            try:
                await room.run(ready)
            finally:
                finished.set()

        thread = net.start_in_box(main)
        signal.signal(signal.SIGTERM, lambda *_: finished.set())
        signal.signal(signal.SIGINT, lambda *_: finished.set())

        def read_commands() -> None:
            for line in sys.stdin:
                if line.strip():
                    room.post(line)
            finished.set()

        threading.Thread(target=read_commands, daemon=True).start()
        finished.wait()
        room.post(None)
        thread.result(30)


def friend(arguments: argparse.Namespace) -> None:
    async def main() -> None:
        name, track = friend_track(f"{arguments.name}:{arguments.track}")
        peer = AudioBridgePeer(arguments.url, arguments.room, name, track, pin=arguments.pin)
        await peer.join(create_room=dict(ROOM_SETTINGS, pin=arguments.pin) if arguments.pin else ROOM_SETTINGS)
        emit({"display": peer.display, "id": peer.id})
        loop = asyncio.get_running_loop()
        ended = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, ended.set)
        loop.add_signal_handler(signal.SIGINT, ended.set)
        try:
            await ended.wait()
        finally:
            await peer.leave()

    asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(prog="python3 -m tools.voice", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    room = commands.add_parser("lab", help="namespaces, Janus and friends in a room, driven by commands on stdin")
    room.add_argument("--room", default="1234", help="the room (all digits: a numeric Janus id)")
    room.add_argument("--friend", action="append", default=[], metavar="NAME:HZ[:ON/OFF]|NAME:FILE.wav",
                      help="a friend in the room; repeat for more")
    room.add_argument("--pin", help="the room's pin (the first friend creates the room with it)")
    room.add_argument("--session-timeout", type=int, default=60, help="Janus' session_timeout (s)")
    room.add_argument("--reclaim-timeout", type=int, default=0, help="Janus' reclaim_session_timeout (s; 0: none)")
    room.add_argument("--api-secret", help="Janus' api_secret (clients then send it)")
    one = commands.add_parser("friend", help="one friend in a room, until SIGTERM or SIGKILL")
    one.add_argument("--url", required=True, help="Janus' WebSocket (the lab's janus)")
    one.add_argument("--room", required=True)
    one.add_argument("--name", required=True)
    one.add_argument("--track", required=True, metavar="HZ[:ON/OFF]|FILE.wav")
    one.add_argument("--pin")
    arguments = parser.parse_args()
    if arguments.command == "lab":
        lab(arguments)
    else:
        friend(arguments)


if __name__ == "__main__":
    main()
