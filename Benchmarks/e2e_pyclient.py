"""The python-socketio AsyncClient side of Benchmarks/end-to-end.sh and overlay-cost.sh: the
comparison client.

Connects to the sender over WebSocket (headers x-tenant-id and os, as the daemon sends them),
joins the room with `join-room` (waiting for the ack), and for each `overlay` takes `sentAt`
(the sender's wall clock, ms) from the wall clock now. Timeline ids are `TAG-N`; statistics are
kept per tag: count, latencies, the monotonic times of the first and the last overlay, and
overlays whose N is not the previous one's + 1. Prints `READY` once joined. Stops by itself
after --max-seconds. Commands on stdin, each answered by one JSON line on stdout:
  report TAG         the tag's statistics (latency p50/p99/max/mean in ms, firstMs/lastMs)
  expect TAG COUNT   answered at once; one more line, {"reached": TAG, …}, once COUNT overlays
                     of TAG arrived or the last, TAG-(COUNT-1), did (so a driver learns the
                     moment without polling, and whether any went missing)
  keep TAG           keep the overlays of TAG as they arrive (what `verify` needs)
  verify TAG         the count and the SHA-256 of the kept overlays, each serialized compactly
                     in its wire order (json.dumps, separators "," and ":"), in arrival order
  quit

With --ack, it also does the emit-ack work the daemon does for tracked overlays, as an SDK in
the player would (without a store): after taking the latency, `received` for the overlay and
`rendered` (`cancelled`, replaced) for the one it replaces, each an emit with an ack callback
and a payload shaped like the daemon's (clientContext with platform, os, device, timeline).
"""
import argparse
import asyncio
import collections
import hashlib
import json
import sys
import time

import socketio

from benchlib.stats import percentile


class TagStats:
    """What arrived of one tag."""

    def __init__(self):
        self.latencies = []
        self.first = self.last = None
        self.last_number = None
        self.out_of_order = 0
        self.expected = None
        self.kept = None

    def arrived(self, number, latency_ms):
        now = time.monotonic()
        if self.first is None:
            self.first = now
        self.last = now
        if self.last_number is not None and number != self.last_number + 1:
            self.out_of_order += 1
        self.last_number = number
        self.latencies.append(latency_ms)

    def timing(self):
        return {"received": len(self.latencies), "outOfOrder": self.out_of_order,
                "firstMs": None if self.first is None else self.first * 1000,
                "lastMs": None if self.last is None else self.last * 1000}


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--room", default="bench")
    parser.add_argument("--max-seconds", type=float, default=900)
    parser.add_argument("--ack", action="store_true", help="emit-ack received/rendered as the daemon does")
    args = parser.parse_args()

    sio = socketio.AsyncClient(reconnection=False)
    tags = collections.defaultdict(TagStats)

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
        tag, number = body["timelineId"].rsplit("-", 1)
        stats = tags[tag]
        stats.arrived(int(number), now - body["sentAt"])
        if stats.kept is not None:
            stats.kept.append(payload)
        if stats.expected is not None and (len(stats.latencies) == stats.expected or int(number) == stats.expected - 1):
            stats.expected = None
            print(json.dumps({"reached": tag, **stats.timing()}), flush=True)
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
        parts = line.decode().split()
        command, tag = (parts[0] if parts else ""), (parts[1] if len(parts) > 1 else "")
        if command == "report":
            stats = tags.get(tag, TagStats())
            values = stats.latencies
            print(json.dumps({"tag": tag, "p50": percentile(values, 50), "p99": percentile(values, 99),
                              "max": max(values) if values else 0, "mean": sum(values) / len(values) if values else 0,
                              "connected": sio.connected, "acked": acked["count"], **stats.timing()}), flush=True)
        elif command == "expect" and len(parts) == 3:
            tags[tag].expected = int(parts[2])
            print(json.dumps({"expecting": tag, "count": int(parts[2])}), flush=True)
        elif command == "keep" and tag:
            tags[tag].kept = []
            print(json.dumps({"keeping": tag}), flush=True)
        elif command == "verify":
            kept = tags[tag].kept or []
            digest = hashlib.sha256()
            for payload in kept:
                digest.update(json.dumps(payload, separators=(",", ":")).encode())
            print(json.dumps({"tag": tag, "count": len(kept), "sha256": digest.hexdigest()}), flush=True)
        elif command == "quit":
            break
        else:
            print(json.dumps({"error": f"unknown command {command!r}"}), flush=True)
    await sio.disconnect()


if __name__ == "__main__":
    asyncio.run(main())
