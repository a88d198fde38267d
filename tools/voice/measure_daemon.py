"""Figures of the box with the daemon in a voice room (docs/voice.md): the daemon's and its media
process's CPU (utime + stime per second of wall time) and resident memory apart, idle (no room)
and in rooms of 3 and 8 participants (the box and aiortc peers, each sending a tone), the time
from ``voice.join`` to its reply and to hearing every other participant, and Janus' CPU and
memory for the same room.

    sudo python3 -m tools.voice.measure_daemon [--sizes 3,8] [--seconds 10] [--daemon PATH]

The daemon is ``.build/debug/interactived`` unless ``--daemon`` (or ``$INTERACTIVED``) names
another build; its media process is found next to it. Prints one line per figure; asserts
nothing (a benchmark: the figures depend on the machine and the build).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from .audio import RATE, read_raw, tone_level
from .janus import JanusServer
from .measure import cpu_seconds, status_field
from .netns import VoiceNetwork
from .scenario import join_peers, leave_all, raw_sink, tone_source

BOX_TONE = 1500.0
ROOT = Path(__file__).resolve().parents[2]


class Daemon:
    """The real daemon in the box namespace, its local API on a socket in ``folder``."""

    def __init__(self, executable: str, net: VoiceNetwork, janus: JanusServer, folder: Path) -> None:
        self.socket_path = folder / "d.sock"
        self.heard = folder / "heard.raw"
        config = {"voiceUrl": janus.url, "voiceSource": tone_source(BOX_TONE, 0.3), "voiceSink": raw_sink(str(self.heard)),
                  "voiceEchoCancel": False}
        (folder / "config.json").write_text(json.dumps(config))
        (folder / "state").mkdir()
        self.process = subprocess.Popen(net.box_command([executable, "--config", str(folder / "config.json"), "--socket",
                                                         str(self.socket_path), "--state-directory", str(folder / "state"),
                                                         "--log-target", "stderr"]),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not self.socket_path.exists():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("the daemon did not open its socket")
            time.sleep(0.02)
        self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.connection.connect(str(self.socket_path))
        self.connection.settimeout(60)
        self.reader = self.connection.makefile("rb")
        self.next_id = 0

    @property
    def pid(self) -> int:
        return self.process.pid  # `ip netns exec` execs the daemon: the same process

    def call(self, method: str, params: Any = None) -> Any:
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            request["params"] = params
        self.connection.sendall((json.dumps(request) + "\n").encode())
        while True:
            reply = json.loads(self.reader.readline())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def media_pid(self) -> int:
        children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            children += (task / "children").read_text().split()
        if not children:
            raise RuntimeError("the daemon runs no media process")
        return int(children[0])

    def stop(self) -> None:
        self.connection.close()
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def usage(pids: list[int], seconds: float) -> list[float]:
    """Each process's CPU over ``seconds``, in % of one core."""
    before, wall = [cpu_seconds(pid) for pid in pids], time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - wall
    return [100 * (cpu_seconds(pid) - start) / elapsed for pid, start in zip(pids, before)]


def measure(executable: str, size: int, seconds: float, folder: Path) -> None:
    tones = [400.0 + 100 * index for index in range(size - 1)]
    room = str(4000 + size)
    with VoiceNetwork() as net, JanusServer(net) as janus:
        # The peers live on a thread in the box namespace for the whole measurement.
        holder: dict[str, Any] = {}

        async def peers_main() -> None:
            import asyncio
            holder["peers"] = await join_peers(janus.url, room, tones, amplitude=0.8 / len(tones))
            holder["ready"] = True
            while not holder.get("done"):
                await asyncio.sleep(0.1)
            await leave_all(holder["peers"])

        thread = net.start_in_box(peers_main)
        deadline = time.monotonic() + 60
        while not holder.get("ready"):
            if time.monotonic() > deadline:
                raise RuntimeError("the peers did not join")
            time.sleep(0.05)
        daemon = Daemon(executable, net, janus, folder)
        try:
            time.sleep(2)
            (idle_cpu,) = usage([daemon.pid], seconds)
            print(f"idle (room of {size} waiting): daemon CPU {idle_cpu:.2f}% of a core, RSS {status_field(daemon.pid, 'VmRSS')}",
                  flush=True)
            started = time.monotonic()
            reply = daemon.call("voice.join", {"room": room, "display": "Box", "timeoutMs": 20000})
            replied = time.monotonic() - started

            def everyone_heard() -> bool:
                recent = read_raw(str(daemon.heard), 0.1) if daemon.heard.exists() else []
                return len(recent) == RATE // 10 and all(tone_level(recent, tone) > -25 for tone in tones)

            while not everyone_heard():
                if time.monotonic() - started > 30:
                    raise RuntimeError("the box did not hear every peer within 30 s")
                time.sleep(0.01)
            heard = time.monotonic() - started
            time.sleep(3)  # past the start: jitter buffers filled, ICE settled
            media = daemon.media_pid()
            assert janus.process is not None
            daemon_cpu, media_cpu, janus_cpu = usage([daemon.pid, media, janus.process.pid], seconds)
            print(f"room of {size} ({reply['state']}, {len(reply['participants'])} participants): "
                  f"voice.join -> reply {replied * 1000:.0f} ms, -> every other participant heard {heard * 1000:.0f} ms", flush=True)
            print(f"  daemon: CPU {daemon_cpu:.2f}% of a core, RSS {status_field(daemon.pid, 'VmRSS')}, "
                  f"{status_field(daemon.pid, 'Threads')} threads", flush=True)
            print(f"  media process: CPU {media_cpu:.1f}% of a core, RSS {status_field(media, 'VmRSS')}, "
                  f"{status_field(media, 'Threads')} threads", flush=True)
            print(f"  janus: CPU {janus_cpu:.1f}% of a core, RSS {status_field(janus.process.pid, 'VmRSS')}", flush=True)
            daemon.call("voice.leave")
        finally:
            daemon.stop()
            holder["done"] = True
            thread.result(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="3,8", help="participants per room, the box included (default 3,8)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long CPU is measured (default 10)")
    parser.add_argument("--daemon", default=os.environ.get("INTERACTIVED", str(ROOT / ".build/debug/interactived")))
    arguments = parser.parse_args()
    for size in (int(text) for text in arguments.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="voice-measure-") as folder:
            measure(arguments.daemon, size, arguments.seconds, Path(folder))


if __name__ == "__main__":
    main()
