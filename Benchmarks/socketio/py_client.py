"""python-socketio AsyncClient side of the benchmark (same sender, same measurements)."""
import argparse
import asyncio
import json
import time

import socketio


def rss_kib():
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


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
    latencies = sorted(state["latencies"])
    rss, hwm = rss_kib()
    await sio.disconnect()
    print(json.dumps({
        "client": "python-socketio",
        "burst_events": burst_received,
        "events_per_second": round(throughput),
        "rate_events": len(latencies),
        "p50_ms": round(latencies[len(latencies) // 2], 3),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 3),
        "rss_kib": rss,
        "peak_rss_kib": hwm,
    }))


if __name__ == "__main__":
    asyncio.run(main())
