"""Fast local Socket.IO sender for Benchmarks/end-to-end.sh (python-socketio AsyncServer on aiohttp).

It plays the Interactive backend's live side and nothing else:
- accepts every connection; acks `join-room` ({"ok": true}) and `emit-ack` ({"ok": true}) at once;
- on `POST /bench/run` {"room","rate","seconds","tag","tracked","duration"} emits `overlay` to the room at a
  fixed rate: each a minigame overlay (typeTimeline 1) with a unique timelineId `TAG-N`, position
  alignment N % 9, targets ["all"], duration (default 15 s), and `sentAt` (wall clock, ms, taken just before
  the emit) inside the overlay object; wrapped as {"data": overlay, "_trackingId", "_emitTimestamp"}
  when tracked. The reply says how many were sent and the rate achieved;
- `GET /bench/state` tells who is in which room and what the clients sent back.

Each emit is encoded once by python-socketio and written to every room member. Loopback only.
Prints `READY <port>` once listening. Stops by itself after --max-seconds.
"""
import argparse
import asyncio
import collections
import time

import socketio
from aiohttp import web


def build_app():
    sio = socketio.AsyncServer(async_mode="aiohttp", cors_allowed_origins="*", ping_interval=25,
                               ping_timeout=20, logger=False, engineio_logger=False)
    app = web.Application()
    sio.attach(app, socketio_path="socket.io")
    stats = {"connects": 0, "joins": 0, "acks": 0, "stages": collections.Counter(), "other": collections.Counter()}
    base = {"url": "http://127.0.0.1"}

    @sio.event
    async def connect(sid, environ, auth):
        stats["connects"] += 1

    @sio.on("join-room")
    async def join_room(sid, data):
        media = str((data or {}).get("mediaId"))
        await sio.enter_room(sid, media)
        stats["joins"] += 1
        return {"ok": True}

    @sio.on("leave-room")
    async def leave_room(sid, data):
        await sio.leave_room(sid, str((data or {}).get("mediaId")))

    @sio.on("emit-ack")
    async def emit_ack(sid, data):
        stats["acks"] += 1
        stats["stages"][str((data or {}).get("stage"))] += 1
        return {"ok": True}

    @sio.on("*")
    async def any_other(event, sid, *args):
        stats["other"][event] += 1

    def overlay(tag, number, tracked, duration):
        timeline = f"{tag}-{number}"
        body = {
            "timelineId": timeline, "typeTimeline": 1,
            "url": f"{base['url']}/templates/quiz.html?id={timeline}",
            "position": {"alignment": number % 9, "width": 36, "height": 45},
            "duration": duration, "targets": ["all"], "traceLock": False, "requireVip": False,
            "requireBet": False, "requireFanclub": False, "betAmount": 0,
            "sentAt": time.time() * 1000.0,
        }
        if not tracked:
            return body
        return {"data": body, "_trackingId": f"trk-{timeline}", "_emitTimestamp": int(body["sentAt"])}

    async def run(request):
        spec = await request.json()
        room, rate, seconds = str(spec["room"]), float(spec["rate"]), float(spec["seconds"])
        tag, tracked = str(spec["tag"]), bool(spec.get("tracked", True))
        duration = int(spec.get("duration", 15))
        if not (0 < rate <= 100_000 and 0 < seconds <= 60):
            return web.json_response({"error": "rate 0..100000, seconds 0..60"}, status=400)
        total = int(rate * seconds)
        sent = 0
        worst_behind = 0
        start = time.perf_counter()
        while sent < total:
            now = time.perf_counter()
            due = min(total, int((now - start) * rate) + 1)
            worst_behind = max(worst_behind, due - sent - 1)
            while sent < due:
                await sio.emit("overlay", overlay(tag, sent, tracked, duration), room=room)
                sent += 1
            delay = start + sent / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if time.perf_counter() - start > seconds * 3 + 5:
                break  # hopelessly behind: stop, the reply says how many went out
        elapsed = time.perf_counter() - start
        return web.json_response({"tag": tag, "sent": sent, "seconds": elapsed, "achievedRate": sent / elapsed,
                                  "worstBehindEvents": worst_behind})

    async def state(request):
        rooms = {}
        for room in ("bench",):
            rooms[room] = len(list(sio.manager.get_participants("/", room)))
        return web.json_response({"rooms": rooms, "connects": stats["connects"], "joins": stats["joins"],
                                  "acks": stats["acks"], "stages": dict(stats["stages"]), "other": dict(stats["other"])})

    app.router.add_post("/bench/run", run)
    app.router.add_get("/bench/state", state)
    return app, base


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--max-seconds", type=float, default=900)
    args = parser.parse_args()
    app, base = build_app()
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    base["url"] = f"http://127.0.0.1:{port}"
    print(f"READY {port}", flush=True)
    try:
        await asyncio.sleep(args.max_seconds)
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
