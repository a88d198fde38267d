"""The python-socketio AsyncClient side of Benchmarks/end-to-end.sh: the comparison client.

Connects to the sender over WebSocket (headers x-tenant-id and os, as the daemon sends them),
joins the room with `join-room` (waiting for the ack), and for each `overlay` takes `sentAt`
(the sender's wall clock, ms) from the wall clock now. Timeline ids are `TAG-N`; statistics are
kept per tag. Commands on stdin, one JSON line answered on stdout: `report TAG`, `quit`.
Prints `READY` once joined. Stops by itself after --max-seconds.

With --ack, it also does the emit-ack work the daemon does for tracked overlays, as an SDK in
the player would (without a store): after taking the latency, `received` for the overlay and
`rendered` (`cancelled`, replaced) for the one it replaces, each an emit with an ack callback
and a payload shaped like the daemon's (clientContext with platform, os, device, timeline).
"""
import argparse
import asyncio
import collections
import json
import sys
import time

import socketio


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, -(-len(ordered) * p // 100) - 1))
    return ordered[int(rank)]


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--room", default="bench")
    parser.add_argument("--max-seconds", type=float, default=900)
    parser.add_argument("--ack", action="store_true", help="emit-ack received/rendered as the daemon does")
    args = parser.parse_args()

    sio = socketio.AsyncClient(reconnection=False)
    latencies = collections.defaultdict(list)

    acked = {"count": 0}
    previous = {"trackingId": None, "timelineId": None}

    def on_ack(*_):
        acked["count"] += 1

    def ack_payload(tracking_id, timeline_id, stage, custom):
        now = int(time.time() * 1000)
        return {"trackingId": tracking_id, "event": "overlay", "stage": stage, "deviceId": "0123456789abcdef0123456789abcdef",
                "clientContext": {"platform": "linux", "os": "Debian GNU/Linux 12 (bookworm)", "sdkVersion": "0.1.0",
                                  "deviceClass": "settopbox", "viewport": {"width": 1920, "height": 1080},
                                  "timeline": {"timelineId": timeline_id, "receivedAt": now, "ackSentAt": now},
                                  "custom": custom}}

    @sio.on("overlay")
    async def on_overlay(payload):
        now = time.time() * 1000.0
        body = payload["data"] if isinstance(payload.get("data"), dict) else payload
        tag = body["timelineId"].rsplit("-", 1)[0]
        latencies[tag].append(now - body["sentAt"])
        tracking_id = payload.get("_trackingId")
        if not (args.ack and tracking_id):
            return
        await sio.emit("emit-ack", ack_payload(tracking_id, body["timelineId"], "received", {}), callback=on_ack)
        if previous["trackingId"]:
            await sio.emit("emit-ack", ack_payload(previous["trackingId"], previous["timelineId"], "rendered",
                                                   {"status": "cancelled", "cancelReason": "replaced_by_new_overlay"}),
                           callback=on_ack)
        previous.update(trackingId=tracking_id, timelineId=body["timelineId"])

    await sio.connect(args.url, transports=["websocket"], headers={"x-tenant-id": "bench", "os": "linuxstb"})
    ack = await sio.call("join-room", {"mediaId": args.room, "userId": None, "displayName": None, "os": "linuxstb"},
                         timeout=5)
    if not (isinstance(ack, dict) and ack.get("ok")):
        print(json.dumps({"error": f"join-room ack {ack!r}"}), flush=True)
        return
    print("READY", flush=True)

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    deadline = time.monotonic() + args.max_seconds
    while time.monotonic() < deadline:
        try:
            line = await asyncio.wait_for(reader.readline(), timeout=max(0.1, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            break
        if not line:
            break
        parts = line.decode().split(maxsplit=1)
        if parts and parts[0] == "report":
            tag = parts[1].strip() if len(parts) > 1 else ""
            values = latencies.get(tag, [])
            print(json.dumps({"tag": tag, "received": len(values), "p50": percentile(values, 50),
                              "p99": percentile(values, 99), "max": max(values) if values else 0,
                              "mean": sum(values) / len(values) if values else 0,
                              "connected": sio.connected, "acked": acked["count"]}), flush=True)
        elif parts and parts[0] == "quit":
            break
    await sio.disconnect()


if __name__ == "__main__":
    asyncio.run(main())
