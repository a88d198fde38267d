"""python-socketio AsyncClient side of the benchmark (same sender, same measurements)."""
import argparse
import asyncio
import json
import os
import sys
import time

import socketio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # Benchmarks/, for benchlib
from benchlib import procfs  # noqa: E402
from benchlib.stats import percentile  # noqa: E402


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--count", type=int, default=50000)
    parser.add_argument("--rate", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--size", type=int, default=1024)
    args = parser.parse_args()

    sio = socketio.AsyncClient(reconnection=False)
    state = {"received": 0, "latencies": [], "last": 0.0, "mode": None}
    done = asyncio.Event()

    @sio.on("tick")
    async def on_tick(data):
        state["received"] += 1
        state["last"] = time.monotonic()
        if state["mode"] == "rate":
            state["latencies"].append(time.time() * 1000.0 - data["t"])

    @sio.on("done")
    async def on_done(data):
        done.set()

    await sio.connect(args.url, transports=["websocket"])
    # Throughput.
    state["mode"] = "burst"
    start = time.monotonic()
    await sio.emit("start", {"mode": "burst", "count": args.count, "size": args.size})
    await asyncio.wait_for(done.wait(), 300)
    throughput = state["received"] / (state["last"] - start)
    burst_received = state["received"]
    # Latency at a fixed rate.
    done.clear()
    state.update(received=0, mode="rate", latencies=[])
    await sio.emit("start", {"mode": "rate", "rate": args.rate, "seconds": args.seconds, "size": args.size})
    await asyncio.wait_for(done.wait(), args.seconds + 60)
    latencies = state["latencies"]
    memory = procfs.status(os.getpid())
    await sio.disconnect()
    print(json.dumps({
        "client": "python-socketio",
        "burst_events": burst_received,
        "events_per_second": round(throughput),
        "rate_events": len(latencies),
        "p50_ms": round(percentile(latencies, 50), 3),
        "p99_ms": round(percentile(latencies, 99), 3),
        "rss_kib": memory.get("VmRSS", 0),
        "peak_rss_kib": memory.get("VmHWM", 0),
    }))


if __name__ == "__main__":
    asyncio.run(main())
