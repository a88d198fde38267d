"""Hostile REST replies (issue 20, item 2): the daemon's peak memory and the local API's longest
stall while it reads one large reply, for each daemon binary given, in the same run.

A hostile REST server (aiohttp on 127.0.0.1) plays the backend's REST API and the playback API.
The real daemon is pointed at it, a viewer logs in, and then, one case after the other:

  status-16M      `interactive.status`: a 15.5 MiB interactive-status reply (1.6 million ids; just under the 16 MiB
                  that every REST reply could be before)
  status-100k     `interactive.status`: 256 KiB holding 100,000 small entries (`[0,0,…]` beside `answered`)
  status-objects  `interactive.status`: 256 KiB of 30,000 one-member objects (`{"a":0}`)
  scenario-4M     `room.join` vod: a 4 MiB VOD scenario of 15,000 ACTIVE timelines
  scenario-tiny   `room.join` vod: 4 MiB of 500,000 tiny inactive timelines (`{"a":0}`)
  play-100k       `playback.start`: a play reply with 100,000 `next` entries (12 MiB)
  continue-flood  `interactive.status`: `100 Continue` lines without end, then nothing

Before each case the daemon's peak RSS is reset (`/proc/PID/clear_refs` 5); after it the
script prints VmHWM (the peak during the case), the method's reply (or error) and the longest
time a probe connection, calling `daemon.hello` back to back, waited for a reply meanwhile
(the event loop's stall). The daemon is checked to be still running after each case.

Usage: python3 Benchmarks/rest-replies.py NAME=BINARY [NAME=BINARY ...] [--cases a,b]
Runs as root (clear_refs). Asserts nothing; prints figures.
"""
import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from aiohttp import web

from benchlib.procfs import rss_kib

CASES = ["status-16M", "status-100k", "status-objects", "scenario-4M", "scenario-tiny", "play-100k", "continue-flood"]


def status_16m():
    ids = ",".join(f'"{n:07d}"' for n in range(int(15.5 * 1024 * 1024) // 10))
    return ('{"answered":[' + ids + "]}").encode()


def status_entries():
    return ('{"answered":["tl1"],"x":[' + ",".join("0" for _ in range(100_000)) + "]}").encode()


def status_objects():
    return ('{"answered":["tl1"],"x":[' + ",".join('{"a":0}' for _ in range(30_000)) + "]}").encode()


def scenario(count, tiny):
    if tiny:
        timelines = ",".join('{"a":0}' for _ in range(count))
    else:
        timelines = ",".join(json.dumps({
            "timelineId": f"tl-{n}", "typeTimeline": 1, "showStatus": "ACTIVE", "time": str(n),
            "url": f"http://127.0.0.1/q.html?id=tl-{n}", "position": {"alignment": 4, "width": 40, "height": 30},
            "duration": 30, "targets": ["all"], "pad": "p" * 40}) for n in range(count))
    return ('{"timelines":[' + timelines + "]}").encode()


def play_reply(count):
    ticket = {"vid": "v", "playAuthToken": "pat", "expiresAt": "2099-01-01T00:00:00Z", "subtitles": []}
    entries = ",".join(json.dumps({"episodeNo": n + 2, "ticket": ticket}) for n in range(count))
    current = json.dumps(dict(ticket, vid="v-1"))
    return ('{"ok":true,"current":' + current + ',"next":[' + entries + "]}").encode()


class HostileREST:
    def __init__(self):
        self.replies = {}
        self.app = web.Application()
        self.app.router.add_route("*", "/{tail:.*}", self.handle)

    async def handle(self, request):
        path = request.path
        await request.read()
        if path.startswith("/api/interactive-status/") and self.replies.get("status") == "continue":
            # A raw transport write: 100 Continue for ever (until the daemon closes).
            transport = request.transport
            try:
                while not transport.is_closing():
                    transport.write(b"HTTP/1.1 100 Continue\r\n\r\n" * 64)
                    await asyncio.sleep(0)
            finally:
                return web.Response(status=200)
        for prefix, key in (("/api/interactive-status/", "status"), ("/api/ctc/scenario/", "scenario"), ("/v1/play", "play")):
            if path.startswith(prefix) and key in self.replies:
                return web.Response(body=self.replies[key], content_type="application/json")
        return web.json_response({"success": False, "code": "EX404"}, status=404)

    async def start(self):
        runner = web.AppRunner(self.app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, site._server.sockets[0].getsockname()[1]


class Connection:
    def __init__(self, reader, writer):
        self.reader, self.writer, self.number = reader, writer, 0

    @classmethod
    async def open(cls, path):
        reader, writer = await asyncio.open_unix_connection(path, limit=64 << 20)
        return cls(reader, writer)

    async def call(self, method, params=None, timeout=60):
        self.number += 1
        message = {"jsonrpc": "2.0", "id": self.number, "method": method}
        if params is not None:
            message["params"] = params
        self.writer.write(json.dumps(message).encode() + b"\n")
        await self.writer.drain()
        while True:
            line = await asyncio.wait_for(self.reader.readline(), timeout)
            if not line:
                raise ConnectionError("the daemon closed the connection")
            reply = json.loads(line)
            if reply.get("id") == self.number:
                return reply


async def probe(path, stop, worst):
    connection = await Connection.open(path)
    while not stop.is_set():
        started = time.perf_counter()
        await connection.call("daemon.hello", timeout=30)
        worst[0] = max(worst[0], (time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.001)
    connection.writer.close()


def summary(reply):
    if "error" in reply:
        return "error: " + reply["error"].get("message", "")[:90]
    result = json.dumps(reply.get("result"))
    return "result: " + (result if len(result) < 90 else result[:87] + "...")


async def run_daemon(name, binary, cases, server):
    work = tempfile.mkdtemp(prefix="replies-")
    path = os.path.join(work, "d.sock")
    origin = f"http://127.0.0.1:{server.port}"
    daemon = subprocess.Popen([binary, "--socket", path, "--state-directory", os.path.join(work, "state"),
                               "--config", os.path.join(work, "none.json"), "--api-url", origin, "--socket-url", origin,
                               "--tenant", "onlivev2", "--os", "linuxstb", "--log-target", "stderr"],
                              stderr=open(os.path.join(work, "daemon.log"), "wb"))
    try:
        for _ in range(400):
            if os.path.exists(path):
                break
            await asyncio.sleep(0.05)
        control = await Connection.open(path)
        await control.call("config.set", {"httpTimeoutMs": 20000, "playbackTimeoutMs": 20000})
        await control.call("session.login", {"token": "tok", "userId": "u1"})
        print(f"{name}: {binary} (pid {daemon.pid}), idle VmRSS {rss_kib(daemon.pid) / 1024:.1f} MiB", flush=True)
        for case in cases:
            server.rest.replies = {}
            if case.startswith("status") or case == "continue-flood":
                server.rest.replies["status"] = {"status-16M": status_16m, "status-100k": status_entries,
                                                 "status-objects": status_objects}.get(case, lambda: "continue")()
                method, params = "interactive.status", {"mediaId": "m1"}
            elif case.startswith("scenario"):
                server.rest.replies["scenario"] = scenario(500_000, True) if case == "scenario-tiny" else scenario(15_000, False)
                method, params = "room.join", {"mediaId": f"v-{case}", "mode": "vod"}
            else:
                server.rest.replies["play"] = play_reply(100_000)
                method, params = "playback.start", {"filmId": "f1", "episodeNo": 1,
                                                    "device": {"unionInfo": "u", "drmKek": "k"}}
            body = server.rest.replies.get("status") or server.rest.replies.get("scenario") or server.rest.replies.get("play")
            size = f"{len(body) / 1048576:.2f} MiB" if isinstance(body, bytes) else "endless"
            await asyncio.sleep(0.3)
            with open(f"/proc/{daemon.pid}/clear_refs", "w") as refs:
                refs.write("5")
            stop = asyncio.Event()
            worst = [0.0]
            prober = asyncio.create_task(probe(path, stop, worst))
            await asyncio.sleep(0.2)
            started = time.perf_counter()
            try:
                reply = summary(await control.call(method, params, timeout=40))
            except Exception as error:  # the daemon died, or never answered
                reply = f"no reply ({type(error).__name__})"
            took = (time.perf_counter() - started) * 1000
            await asyncio.sleep(0.5 if case != "play-100k" else 1.5)
            stop.set()
            try:
                await asyncio.wait_for(prober, 35)
            except Exception:
                worst[0] = float("inf")
            alive = daemon.poll() is None
            peak = rss_kib(daemon.pid, "VmHWM") / 1024 if alive else float("nan")
            print(f"  {case:15s} body {size:>9s}  call {took:8.0f} ms  VmHWM {peak:6.1f} MiB  longest stall {worst[0]:7.1f} ms"
                  f"  alive {alive}  {reply}", flush=True)
            if not alive:
                break
            if method == "room.join":
                await control.call("room.leave")
            if method == "playback.start":
                await control.call("playback.stop")
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(10)
            except subprocess.TimeoutExpired:
                daemon.kill()
        shutil.rmtree(work, ignore_errors=True)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("daemons", nargs="+", metavar="NAME=BINARY")
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    cases = args.cases.split(",")

    class Server:
        pass

    server = Server()
    server.rest = HostileREST()
    runner, server.port = await server.rest.start()
    try:
        for spec in args.daemons:
            name, _, binary = spec.partition("=")
            await run_daemon(name, binary, cases, server)
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
