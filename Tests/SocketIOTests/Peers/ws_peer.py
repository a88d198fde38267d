"""Scripted WebSocket peer (websockets package) for frame-level tests.

The request path selects a scenario. Prints "READY <port>" once listening and
"RESULT <scenario> <detail>" lines the tests wait for. Frames the `websockets`
library would refuse to produce are written raw to the transport.
"""
import argparse
import asyncio
import json
import os
import signal
import ssl
import sys

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

# Exit with the test process that started us, even if it is killed.
# Spawned by the Swift tests, we may inherit SIGTERM/SIGINT blocked: accept them again.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})


def frame(opcode, payload=b"", fin=True, rsv=0):
    first = (0x80 if fin else 0) | rsv | opcode
    n = len(payload)
    if n < 126:
        header = bytes([first, n])
    elif n < 65536:
        header = bytes([first, 126]) + n.to_bytes(2, "big")
    else:
        header = bytes([first, 127]) + n.to_bytes(8, "big")
    return header + payload


def result(name, detail):
    print(f"RESULT {name} {detail}", flush=True)


async def closed_code(ws):
    """Waits until the client closes; returns the close code it sent (or 'none')."""
    try:
        while True:
            await asyncio.wait_for(ws.recv(), 10)
    except ConnectionClosed as exc:
        return exc.rcvd.code if exc.rcvd is not None else "none"
    except asyncio.TimeoutError:
        return "timeout"


async def echo_check(ws):
    messages = [
        "hello",
        "h\u00e9llo \u2713 \U0001F600",
        bytes(range(256)),
        "",
        os.urandom(70000),
        "x" * 300,
        b"",
    ]
    ok = True
    for message in messages:
        await ws.send(message)
        echoed = await asyncio.wait_for(ws.recv(), 10)
        if echoed != message:
            ok = False
    # A fragmented message, written raw.
    ws.transport.write(frame(0x1, b"frag", fin=False) + frame(0x0, b"men", fin=False) + frame(0x0, b"ted"))
    echoed = await asyncio.wait_for(ws.recv(), 10)
    ok = ok and echoed == "fragmented"
    result("echo-check", "OK" if ok else "FAIL")
    await ws.close(1000, "done")


async def fragmented(ws):
    ws.transport.write(frame(0x1, b"hel", fin=False) + frame(0x0, b"lo w", fin=False) + frame(0x0, b"orld"))
    ws.transport.write(frame(0x2, b"\x01\x02", fin=False) + frame(0x0, b"\x03", fin=False) + frame(0x0, b"\x04\x05"))
    result("fragmented", await closed_code(ws))


async def ping_fragments(ws):
    ws.transport.write(frame(0x1, b"one ", fin=False))
    first = await ws.ping(b"p1")
    ws.transport.write(frame(0x0, b"two ", fin=False))
    second = await ws.ping(b"p2")
    ws.transport.write(frame(0x0, b"three"))
    try:
        await asyncio.wait_for(asyncio.gather(first, second), 5)
        await ws.send("pongs-ok")
    except asyncio.TimeoutError:
        await ws.send("pongs-missing")
    result("ping-fragments", await closed_code(ws))


async def large(ws):
    big = os.urandom(70000)
    medium = os.urandom(300)
    await ws.send(big)
    await ws.send(medium)
    back1 = await asyncio.wait_for(ws.recv(), 10)
    back2 = await asyncio.wait_for(ws.recv(), 10)
    await ws.send("large-ok" if (back1, back2) == (big, medium) else "large-bad")
    result("large", await closed_code(ws))


async def raw_then_wait(ws, name, data):
    ws.transport.write(data)
    result(name, await closed_code(ws))


async def close_code(ws):
    await ws.close(4001, "bye")
    result("close-code", ws.close_code)


async def headers(ws):
    await ws.send(json.dumps({k.lower(): v for k, v in ws.request.headers.raw_items()}))
    result("headers", await closed_code(ws))


async def client_close(ws):
    try:
        while True:
            await ws.recv()
    except ConnectionClosed as exc:
        result("client-close", f"{exc.rcvd.code if exc.rcvd else 'none'} {exc.rcvd.reason if exc.rcvd else ''}")


async def blackhole(ws):
    """Engine.IO v4 + Socket.IO v5 handshake, then silence (no pings, no answers)."""
    await ws.send('0{"sid":"blackhole","upgrades":[],"pingInterval":500,"pingTimeout":500,"maxPayload":1000000}')
    connect = await asyncio.wait_for(ws.recv(), 10)
    await ws.send('40{"sid":"bh-socket"}')
    result("blackhole-connected", connect)
    # Go silent: keep the TCP connection open, answer nothing.
    ws.transport.pause_reading()
    await asyncio.sleep(30)


async def coalesced(ws):
    """CONNECT reply and two events in one TCP segment, then an event later."""
    await ws.send('0{"sid":"coalesced","upgrades":[],"pingInterval":25000,"pingTimeout":20000}')
    await asyncio.wait_for(ws.recv(), 10)
    ws.transport.write(frame(0x1, b'40{"sid":"co-socket"}') + frame(0x1, b'42["first",1]')
                       + frame(0x1, b'451-["second",{"_placeholder":true,"num":0}]') + frame(0x2, b"\x07\x08"))
    await asyncio.sleep(0.2)
    await ws.send('42["third",3]')
    result("coalesced", await closed_code(ws))


SCENARIOS = {
    "/coalesced/": coalesced,
    "/echo-check": echo_check,
    "/fragmented": fragmented,
    "/ping-fragments": ping_fragments,
    "/large": large,
    "/bad-utf8": lambda ws: raw_then_wait(ws, "bad-utf8", frame(0x1, b"ok \xff\xfe")),
    "/reserved-bits": lambda ws: raw_then_wait(ws, "reserved-bits", frame(0x1, b"x", rsv=0x40)),
    "/unknown-opcode": lambda ws: raw_then_wait(ws, "unknown-opcode", frame(0x3, b"x")),
    "/oversized": lambda ws: raw_then_wait(ws, "oversized", frame(0x2, b"\0" * (2 << 20))),
    # Invalid UTF-8 in a text frame whose end never comes, and in a fragment of a message that
    # never ends: the client must fail at once (RFC 6455 §8.1), not wait for the rest.
    "/bad-utf8-partial-frame": lambda ws: raw_then_wait(
        ws, "bad-utf8-partial-frame", frame(0x1, b"ok \xf4\x90\x80\x80" + b"x" * 100)[:9]),
    "/bad-utf8-fragment": lambda ws: raw_then_wait(
        ws, "bad-utf8-fragment", frame(0x1, b"ok ", fin=False) + frame(0x0, b"\xed\xa0\x80", fin=False)),
    "/close-code": close_code,
    "/headers": headers,
    "/client-close": client_close,
    "/socket.io/": blackhole,
}


async def handler(ws):
    path = ws.request.path.split("?")[0]
    scenario = SCENARIOS.get(path)
    if scenario is None:
        await ws.close(1008, "unknown scenario")
        return
    await scenario(ws)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
    async with serve(handler, "127.0.0.1", args.port, ssl=context, ping_interval=None,
                     max_size=None, compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"READY {port}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
