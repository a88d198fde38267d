"""Figures of the media process in a room (docs/voice.md): its CPU (utime + stime per second of
wall time) and resident memory in steady state, and the time from ``start`` to hearing the
others, for rooms of 3 and 8 participants (the box and aiortc peers, each sending a tone); and
Janus' CPU and memory for the same room.

    sudo python3 -m tools.voice.measure [--sizes 3,8] [--seconds 10] [--echo-cancel]

Prints one line per room; asserts nothing (a benchmark: the figures depend on the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from .audio import RATE, read_raw, tone_level
from .driver import BoxDriver
from .janus import JanusServer
from .netns import VoiceNetwork
from .scenario import join_peers, leave_all, raw_sink, tone_source, until

BOX_TONE = 1500.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def status_field(pid: int, name: str) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    return "?"


async def measure_room(janus: JanusServer, size: int, seconds: float, echo_cancel: bool, folder: Path) -> dict:
    tones = [400.0 + 100 * index for index in range(size - 1)]
    # The mix stays below full scale: 0.8 shared between the peers' tones.
    peers = await join_peers(janus.url, str(3000 + size), tones, amplitude=0.8 / len(tones))
    heard = folder / f"box-{size}.raw"
    box = BoxDriver(janus.url, str(3000 + size), "Box", tone_source(BOX_TONE), raw_sink(str(heard)), echo_cancel=echo_cancel)
    try:
        await box.join()
        assert box.media is not None
        first_audio = await until(lambda: heard.exists() and heard.stat().st_size > 0 and time.monotonic(), 20, 0.005, "the first audio at the box")

        def all_heard() -> float | bool:
            recent = read_raw(str(heard), 0.1)
            return len(recent) == RATE // 10 and all(tone_level(recent, tone) > -25 for tone in tones) and time.monotonic()

        everyone = await until(all_heard, 20, 0.01, "the box hearing every peer")
        messages = box.media.messages

        def since_start(predicate) -> float:
            moment = messages.first_time(predicate)
            return (moment - box.started_at) if moment is not None else float("nan")

        steps = {"ready": since_start(lambda m: m["type"] == "ready"), "offer": since_start(lambda m: m["type"] == "offer"),
                 "ice connected": since_start(lambda m: m["type"] == "state" and m["ice"] in ("connected", "completed")),
                 "peer connected": since_start(lambda m: m["type"] == "state" and m.get("connection") == "connected")}
        pid = box.media.process.pid
        await asyncio.sleep(3)  # past the start: jitter buffers filled, ICE settled
        assert janus.process is not None
        server = janus.process.pid  # `ip netns exec` execs janus: the same process
        cpu_before, server_before, wall_before = cpu_seconds(pid), cpu_seconds(server), time.monotonic()
        await asyncio.sleep(seconds)
        wall = time.monotonic() - wall_before
        cpu = (cpu_seconds(pid) - cpu_before) / wall
        server_cpu = (cpu_seconds(server) - server_before) / wall
        return {
            "size": size,
            "first_audio_s": first_audio - box.started_at,
            "all_heard_s": everyone - box.started_at,
            "cpu_percent": 100 * cpu,
            "rss": status_field(pid, "VmRSS"),
            "threads": status_field(pid, "Threads"),
            "steps": steps,
            "janus_cpu_percent": 100 * server_cpu,
            "janus_rss": status_field(server, "VmRSS"),
        }
    finally:
        await leave_all(peers, box)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="3,8", help="participants per room, the box included (default 3,8)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long CPU is measured (default 10)")
    parser.add_argument("--echo-cancel", action="store_true", help="with webrtcdsp echo cancellation")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="voice-measure-") as folder:
        for size in (int(text) for text in arguments.sizes.split(",")):
            with VoiceNetwork() as net, JanusServer(net) as janus:
                figures = net.run_in_box(lambda: measure_room(janus, size, arguments.seconds, arguments.echo_cancel, Path(folder)),
                                         timeout=arguments.seconds + 120)
            print(f"room of {figures['size']}: media process CPU {figures['cpu_percent']:.1f}% of a core "
                  f"(utime+stime over {arguments.seconds:.0f} s), RSS {figures['rss']}, {figures['threads']} threads; "
                  f"start -> first audio {figures['first_audio_s'] * 1000:.0f} ms, -> every peer heard "
                  f"{figures['all_heard_s'] * 1000:.0f} ms" + (" (echo cancellation on)" if arguments.echo_cancel else ""), flush=True)
            print(f"  janus: CPU {figures['janus_cpu_percent']:.1f}% of a core, RSS {figures['janus_rss']}", flush=True)
            print("  start -> " + ", ".join(f"{step} {seconds * 1000:.0f} ms" for step, seconds in figures["steps"].items()), flush=True)


if __name__ == "__main__":
    main()
