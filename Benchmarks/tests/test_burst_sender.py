"""Benchmarks/burst_sender.c against a real peer, python-socketio's AsyncClient (the daemon is
checked by every run of overlay-cost.sh): a burst arrives whole, in order and byte for byte; the
ack window holds; pings are answered; the REST calls of a joined daemon are served.

  python3 -m pytest -q -p no:benchmark Benchmarks/tests     (builds the sender with $CC, gcc by default)
"""
import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest
import socketio

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(os.path.dirname(HERE), "burst_sender.c")
pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    compiler = os.environ.get("CC", "gcc")
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler})")
    path = str(tmp_path_factory.mktemp("burst") / "burst_sender")
    subprocess.run([compiler, "-O2", "-Wall", "-Wextra", "-Werror", "-o", path, SOURCE, "-lcrypto"], check=True)
    return path


class Sender:
    def __init__(self, binary, *options):
        self.proc = subprocess.Popen([binary, "--port", "0", *options], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        ready = self.proc.stdout.readline().split()
        assert ready[0] == "READY"
        self.url = f"http://127.0.0.1:{ready[1]}"

    async def ask(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        line = await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(None, self.proc.stdout.readline), 30)
        return json.loads(line)

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


@pytest.fixture
def sender(binary):
    started = Sender(binary, "--ping-ms", "200")
    yield started
    started.stop()


async def joined_client(sender, room="bench"):
    client = socketio.AsyncClient(reconnection=False)
    await client.connect(sender.url, transports=["websocket"])
    assert await client.call("join-room", {"mediaId": room}, timeout=5) == {"ok": True}
    return client


async def test_a_burst_arrives_whole_in_order_and_byte_for_byte(sender):
    client = await joined_client(sender)
    received, done = [], asyncio.Event()

    @client.on("overlay")
    async def overlay(payload):
        received.append(payload)
        if len(received) == 3000:
            done.set()

    sent = await sender.ask("burst bench t 3000")
    await asyncio.wait_for(done.wait(), 60)
    await client.disconnect()

    assert sent["connections"] == 1 and sent["packetBytes"] == 1024
    assert [p["data"]["timelineId"] for p in received] == [f"t-{n}" for n in range(3000)]
    assert all(p["_trackingId"] == f"t-{p['data']['timelineId']}" for p in received)
    digest = hashlib.sha256()
    for payload in received:
        digest.update(json.dumps(payload, separators=(",", ":")).encode())
    assert digest.hexdigest() == sent["sha256"]
    # Every packet is 1024 bytes: the argument plus `42["overlay",` and `]`.
    assert {len(json.dumps(p, separators=(",", ":"))) + len("42[\"overlay\",]") for p in received} == {1024}


async def test_the_ack_window_holds_the_sender_back(sender):
    client = await joined_client(sender)
    window, count, acked_first = 40, 600, 100
    received, answered, acking, done = [], [0], [False], asyncio.Event()

    def on_answer(reply):
        assert reply == {"ok": True}
        answered[0] += 1

    async def ack(payload):
        await client.emit("emit-ack", {"trackingId": payload["_trackingId"], "stage": "received"}, callback=on_answer)

    @client.on("overlay")
    async def overlay(payload):
        received.append(payload)
        if len(received) <= acked_first or acking[0]:
            await ack(payload)
        if len(received) == count:
            done.set()

    await sender.ask(f"burst bench w {count} {window}")
    # Acks stop after the first 100: the sender may write 40 more, and no more.
    for _ in range(100):
        if len(received) >= acked_first + window:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.5)
    held_at = len(received)
    acking[0] = True
    for payload in received[acked_first:]:
        await ack(payload)
    await asyncio.wait_for(done.wait(), 60)
    for _ in range(100):
        if answered[0] == count:
            break
        await asyncio.sleep(0.05)
    stats = await sender.ask("stats")
    await client.disconnect()

    # It resumes once a quarter of the window is free, so it may stop a little short of it.
    assert acked_first + window - window // 4 <= held_at <= acked_first + window
    assert [p["data"]["timelineId"] for p in received] == [f"w-{n}" for n in range(count)]
    assert answered[0] == count and stats["stages"] == {"received": count}


async def test_pings_are_sent_and_answered(sender):
    client = await joined_client(sender)
    await asyncio.sleep(1.1)
    stats = await sender.ask("stats")
    connected = client.connected
    await client.disconnect()
    assert connected and stats["pingsSent"] >= 4 and stats["pongs"] >= 4


async def test_the_rest_calls_of_a_joined_daemon_are_served(sender):
    def get(path):
        try:
            with urllib.request.urlopen(sender.url + path, timeout=5) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            return error.code, None

    loop = asyncio.get_running_loop()
    assert await loop.run_in_executor(None, get, "/api/interactive-status/m1") == (200, {"answered": []})
    assert await loop.run_in_executor(None, get, "/api/public/vip-status?mediaId=m1") == (200, {"vip": False, "bet": False})
    assert (await loop.run_in_executor(None, get, "/elsewhere"))[0] == 404
    assert (await sender.ask("stats"))["rest"] == {"/api/interactive-status/m1": 1, "/api/public/vip-status": 1,
                                                    "/elsewhere": 1}
