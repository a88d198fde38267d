"""Fast local Socket.IO sender for the benchmark (Engine.IO 4 / Socket.IO 5 over `websockets`).

It speaks just enough of the protocol to connect a client, then streams pre-encoded
`tick` events so that the sender is never the bottleneck. The client asks with
  42["start",{"mode":"burst","count":N,"size":1024}]   as fast as possible
  42["start",{"mode":"rate","rate":500,"seconds":10,"size":1024}]   paced, timestamped
and gets `tick` events {"i":n,"t":<send time, ms since the epoch>,"data":"..."}, then `done`.
Prints "READY <port>".
"""
import argparse
import asyncio
import json
import time

from websockets.asyncio.server import serve


def frame(text):
    payload = text.encode()
    n = len(payload)
    if n < 126:
        header = bytes([0x81, n])
    elif n < 65536:
        header = bytes([0x81, 126]) + n.to_bytes(2, "big")
    else:
        header = bytes([0x81, 127]) + n.to_bytes(8, "big")
    return header + payload


def tick(i, size, stamp):
    body = json.dumps(["tick", {"i": i, "t": stamp, "data": "x" * size}], separators=(",", ":"))
    return "42" + body


_bursts = {}


def burst(count, size):
    """All frames of a burst, encoded once and reused, so encoding never limits the rate."""
    if (count, size) not in _bursts:
        _bursts[(count, size)] = b"".join(frame(tick(i, size, 0)) for i in range(count))
    return _bursts[(count, size)]


async def handler(ws):
    await ws.send('0{"sid":"bench","upgrades":[],"pingInterval":300000,"pingTimeout":60000,"maxPayload":100000000}')
    while True:
        try:
            message = await ws.recv()
        except Exception:
            return
        if message.startswith("40"):
            await ws.send('40{"sid":"bench-socket"}')
        elif message.startswith("42"):
            name, request = json.loads(message[2:])
            if name != "start":
                continue
            size = request.get("size", 1024)
            if request["mode"] == "burst":
                count = request["count"]
                ws.transport.write(burst(count, size))
                await ws.send('42["done",{"count":%d}]' % count)
            else:
                rate = request["rate"]
                total = int(rate * request["seconds"])
                start = time.monotonic()
                sent = 0
                while sent < total:
                    due = min(total, int((time.monotonic() - start) * rate) + 1)
                    while sent < due:
                        ws.transport.write(frame(tick(sent, size, time.time() * 1000.0)))
                        sent += 1
                    await asyncio.sleep(0.0005)
                await ws.send('42["done",{"count":%d}]' % total)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--prepare", type=int, default=50000, help="burst size to encode at start")
    args = parser.parse_args()
    burst(args.prepare, 1024)
    async with serve(handler, "127.0.0.1", args.port, ping_interval=None, max_size=None,
                     compression=None, write_limit=1 << 24) as server:
        print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
