"""A scripted player for the demo: plays the part a real player process would.

It connects to interactived's socket, logs the demo viewer in, joins the live demo room and
reacts to events the way a player with a web engine would: every overlay is reported loaded
and revealed, minigames are answered, bets are accepted, predict/lucky buttons are tapped.
After one live cycle it plays the VOD demo at ten times speed, then three short episodes of a
film with play tickets (its video SDK simulated: it checks its ticket with the backend's video
platform and reports an expired one, so the daemon refreshes it and playback resumes at the same
position), then goes back to live.
Run by scripts/demo; stops on SIGINT/SIGTERM or when the daemon goes away.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import secrets
import signal
import sys
import urllib.error
import urllib.parse
import urllib.request
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


def http(method: str, url: str, body: dict[str, Any] | None = None) -> int:
    """One blocking HTTP request (run it in a thread); the status."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status
    except urllib.error.HTTPError as error:
        return error.code


class Video:
    """The player's video SDK, simulated: it plays what playback.play says, one second of video per
    second, and asks the video platform (the backend's stream check) whether its ticket still
    plays; when it does not, it reports the error at its position, as a real SDK would."""

    #: Seconds of video per demo episode.
    EPISODE_SECONDS = 16.0

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.platform = ""
        self.vid: str | None = None
        self.ticket: str | None = None
        self.position = 0.0
        self.episode_over = asyncio.Event()
        # The SDK's device values, generated once per device after its licence check.
        self.device = {"unionInfo": "demo-" + secrets.token_hex(8), "drmKek": secrets.token_urlsafe(24)}

    def play(self, data: dict[str, Any]) -> None:
        """playback.play: play the ticket from startAt (the token is the SDK's business, never printed)."""
        self.vid, self.ticket, self.position = data["vid"], data["playAuthToken"], float(data["startAt"])
        subtitles = ",".join(entry.get("lang", "?") for entry in data.get("subtitles", [])) or "none yet"
        say(f"video: playing {self.vid} from {self.position:.0f} s (subtitles {subtitles})")

    def stop(self) -> None:
        self.vid = self.ticket = None
        self.episode_over.set()

    async def run(self) -> None:
        """Advance the picture and check the ticket every second."""
        while True:
            await asyncio.sleep(1)
            if self.vid is None or self.ticket is None:
                continue
            query = urllib.parse.urlencode({"token": self.ticket})
            status = await asyncio.to_thread(http, "GET", f"{self.platform}/v1/stream/{self.vid}?{query}")
            if status != 200:
                say(f"video: the platform refused the ticket of {self.vid} at {self.position:.0f} s; reporting the error")
                self.vid = self.ticket = None
                await self.daemon.call("playback.error", {"position": self.position, "message": f"HTTP {status}"})
                continue
            self.position += 1
            if self.position >= self.EPISODE_SECONDS:
                say(f"video: {self.vid} ended")
                self.stop()

    async def watch(self, film: str, episodes: range) -> None:
        """Start each episode as the viewer would; halfway through the first, the platform expires
        every ticket (the demo's fault), so the refresh shows."""
        config = await self.daemon.call("config.get")
        self.platform = config.get("playbackUrl") or config["apiUrl"]
        for episode in episodes:
            self.episode_over.clear()
            say(f"starting {film} episode {episode}")
            reply = await self.daemon.call("playback.start", {"filmId": film, "episodeNo": episode, "device": self.device})
            say(f"playback.start replied {reply['state']}")
            if episode == episodes[0]:
                await asyncio.sleep(self.EPISODE_SECONDS / 2)
                say("(demo) the video platform expires every ticket now")
                await asyncio.to_thread(http, "POST", f"{self.platform}/_admin/playback", {"expireTickets": True})
            try:
                await asyncio.wait_for(self.episode_over.wait(), self.EPISODE_SECONDS * 3)
            except TimeoutError:
                say(f"episode {episode} did not finish; moving on")
        await self.daemon.call("playback.stop")
        self.stop()


class Player:
    def __init__(self, daemon: Daemon, live: str, vod: str) -> None:
        self.daemon = daemon
        self.live = live
        self.vod = vod
        self.video = Video(daemon)
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
            elif kind == "playback.play":
                self.video.play(data)
            elif kind == "playback.preload":
                say(f"video: preloading {data['vid']}")
            elif kind == "playback.state" and data.get("state") == "message":
                say(f"screen: {data['text']} ({'retry' if data.get('canRetry') else 'no retry'})")
                self.video.stop()

    async def show(self, data: dict[str, Any]) -> None:
        overlay = data["overlayId"]
        say(f"loading {data['kind']} {data['timelineId']} at location {data['placement']['location']}: {data['url']}")
        await self.daemon.call("overlay.attached", {"overlayId": overlay})
        await self.daemon.call("overlay.rendered", {"overlayId": overlay, "status": "loaded"})
        await self.daemon.call("overlay.bridge", {"overlayId": overlay, "message": {"type": "INTERACTIVE_SHOW_ANALYTICS"}})
        answer = {"action": "PLAY"} if data["kind"] == "lucky" else {"choice": "A"}
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
            say("leaving the VOD room to watch a film with play tickets")
            await self.daemon.call("room.leave")
            await self.video.watch("f1", range(1, 4))


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
    await daemon.call("events.subscribe", {"types": ["overlay.show", "answer.confirm", "predict.button", "playback."]})
    work = [reading, asyncio.create_task(player.react()), asyncio.create_task(player.script(options.live_seconds)),
            asyncio.create_task(player.video.run()), asyncio.create_task(stop.wait())]
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
