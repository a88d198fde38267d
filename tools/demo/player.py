"""A scripted player for the demo: plays the part a real player process would.

It connects to interactived's socket, logs the demo viewer in, joins the live demo room and
reacts to events the way a player with a web engine would: every overlay is reported loaded
and revealed, minigames are answered, bets are accepted, predict/lucky buttons are tapped.
After one live cycle it plays the VOD demo at ten times speed, then goes back to live.
Run by scripts/demo; stops on SIGINT/SIGTERM or when the daemon goes away.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import signal
import sys
from typing import Any


def say(text: str) -> None:
    print(f"[player] {text}", file=sys.stderr, flush=True)


class Daemon:
    """A JSON-RPC client of the daemon's socket: calls with replies, and an event queue."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def read_forever(self) -> None:
        while line := await self.reader.readline():
            message = json.loads(line)
            if message.get("method") == "event":
                await self.events.put(message["params"])
            elif (future := self.pending.pop(message.get("id"), None)) is not None:
                if "error" in message:
                    future.set_exception(RuntimeError(message["error"].get("message", "error")))
                else:
                    future.set_result(message.get("result"))
        raise ConnectionError("the daemon closed the connection")

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        request_id = next(self.ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        return await asyncio.wait_for(future, 30)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def send(self, message: dict[str, Any]) -> None:
        self.writer.write(json.dumps(message).encode() + b"\n")


class Player:
    def __init__(self, daemon: Daemon, live: str, vod: str) -> None:
        self.daemon = daemon
        self.live = live
        self.vod = vod
        self.tasks: set[asyncio.Task[None]] = set()

    def later(self, delay: float, action: Any) -> None:
        async def run() -> None:
            await asyncio.sleep(delay)
            try:
                await action()
            except RuntimeError as error:  # e.g. the overlay went away meanwhile
                say(f"(skipped: {error})")

        task = asyncio.create_task(run())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def react(self) -> None:
        while True:
            event = await self.daemon.events.get()
            kind, data = event["type"], event["data"]
            if kind == "overlay.show":
                await self.show(data)
            elif kind == "answer.confirm":
                say(f"bet of {data.get('amount')} requested for {data['overlayId']}: accepting")
                await self.daemon.call("answer.confirm", {"overlayId": data["overlayId"], "accept": True})
            elif kind == "predict.button" and data.get("visible") and data.get("image") == "power":
                timeline = data["timelineId"]
                say(f"{data['kind']} button for {timeline} lit up: tapping it in 2 s")
                self.later(2, lambda: self.daemon.call("predict.open", {"timelineId": timeline}))

    async def show(self, data: dict[str, Any]) -> None:
        overlay = data["overlayId"]
        say(f"loading {data['kind']} {data['timelineId']} at location {data['placement']['location']}: {data['url']}")
        await self.daemon.call("overlay.attached", {"overlayId": overlay})
        await self.daemon.call("overlay.rendered", {"overlayId": overlay, "status": "loaded"})
        await self.daemon.call("overlay.bridge", {"overlayId": overlay, "message": {"type": "INTERACTIVE_SHOW_ANALYTICS"}})
        # What the reference templates post as INTERACTIVE_ACTION_REPORT data (docs/players.md, One answer shape).
        answers = {"lucky": {"answer": {"play": True}}, "predict": {"answer": {"choice": "answer1"}}}
        answer = answers.get(data["kind"], {"answer": {"choice": "A"}})
        async def respond() -> None:
            say(f"answering {data['timelineId']} with {answer}")
            await self.daemon.call("overlay.bridge", {"overlayId": overlay, "message": {"type": "INTERACTIVE_ACTION_REPORT", "data": answer}})
        self.later(3, respond)

    async def script(self, live_seconds: float) -> None:
        await self.daemon.call("session.login", {"token": "token-demo", "userId": "demo", "displayName": "Demo Viewer"})
        await self.daemon.call("player.viewport", {"width": 1280, "height": 720})
        while True:
            say(f"joining live room {self.live}")
            await self.daemon.call("room.join", {"mediaId": self.live, "mode": "live"})
            self.daemon.notify("player.state", {"state": "playing", "position": 0})
            await asyncio.sleep(live_seconds)
            say(f"switching to VOD {self.vod}, playing it at 10x")
            await self.daemon.call("room.join", {"mediaId": self.vod, "mode": "vod"})
            for tenth in range(0, 1150, 5):
                self.daemon.notify("player.time", {"seconds": tenth / 10})
                await asyncio.sleep(0.05)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--live", default="demo-live")
    parser.add_argument("--vod", default="demo-vod")
    parser.add_argument("--live-seconds", type=float, default=62)
    options = parser.parse_args()
    reader, writer = await asyncio.open_unix_connection(options.socket, limit=4 << 20)
    daemon = Daemon(reader, writer)
    player = Player(daemon, options.live, options.vod)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    reading = asyncio.create_task(daemon.read_forever())
    await daemon.call("events.subscribe", {"types": ["overlay.show", "answer.confirm", "predict.button"]})
    work = [reading, asyncio.create_task(player.react()), asyncio.create_task(player.script(options.live_seconds)),
            asyncio.create_task(stop.wait())]
    done, pending = await asyncio.wait(work, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    for task in done:
        if task is not work[-1] and task.exception() is not None:
            say(f"stopped: {task.exception()}")
    writer.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
