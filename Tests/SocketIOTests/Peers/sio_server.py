"""python-socketio test server (AsyncServer on aiohttp).

--legacy runs the Socket.IO 2 protocol with python-socketio-v4 / python-engineio-v3
(imported as socketio_v4 / engineio_v3). Prints "READY <port>" once listening, and
"CONNECT <sid> <namespace> <token>", "REFUSED <sid>" and "DISCONNECT <sid> <namespace>" lines.
"""
import argparse
import asyncio
import signal
import ssl
import sys
from urllib.parse import parse_qs

from aiohttp import web

# Exit with the test process that started us, even if it is killed.
# Spawned by the Swift tests, we may inherit SIGTERM/SIGINT blocked: accept them again.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=0)
parser.add_argument("--ping-interval", type=float, default=25)
parser.add_argument("--ping-timeout", type=float, default=20)
parser.add_argument("--legacy", action="store_true")
parser.add_argument("--cert")
parser.add_argument("--key")
args = parser.parse_args()

if args.legacy:
    import socketio_v4 as socketio

    # python-socketio-v4 (2020) passes bare coroutines to asyncio.wait, which Python 3.11
    # forbids; wrap them in tasks as older Pythons did.
    _asyncio_wait = asyncio.wait

    async def _wait_accepting_coroutines(aws, *wait_args, **wait_kwargs):
        return await _asyncio_wait([asyncio.ensure_future(a) for a in aws], *wait_args, **wait_kwargs)

    asyncio.wait = _wait_accepting_coroutines
    sio = socketio.AsyncServer(async_mode="aiohttp", ping_interval=args.ping_interval,
                               ping_timeout=args.ping_timeout)
else:
    import socketio
    sio = socketio.AsyncServer(async_mode="aiohttp", ping_interval=args.ping_interval,
                               ping_timeout=args.ping_timeout, namespaces=["/", "/admin"])

connected = set()
HEADERS = ["x-tenant-id", "os", "authorization"]


def header_map(environ):
    return {h: environ.get("HTTP_" + h.upper().replace("-", "_")) for h in HEADERS}


async def on_connect(sid, environ, auth=None, namespace="/"):
    query = parse_qs(environ.get("QUERY_STRING", ""))
    token = (auth or {}).get("token") if isinstance(auth, dict) else None
    if args.legacy:
        token = query.get("token", [None])[0]
    if token == "bad":
        print(f"REFUSED {sid}", flush=True)
        if args.legacy:
            return False
        raise socketio.exceptions.ConnectionRefusedError("authentication failed", {"code": "E401"})
    connected.add(sid)
    print(f"CONNECT {sid} {namespace} {token}", flush=True)
    # Sent before the CONNECT reply: the client must keep it.
    await sio.emit("welcome", {"headers": header_map(environ), "auth": auth, "token": token,
                               "namespace": namespace}, room=sid, namespace=namespace)


def register(namespace):
    if args.legacy:
        @sio.on("connect", namespace=namespace)
        async def connect(sid, environ):
            return await on_connect(sid, environ, None, namespace)
    else:
        @sio.on("connect", namespace=namespace)
        async def connect(sid, environ, auth):
            return await on_connect(sid, environ, auth, namespace)

    @sio.on("disconnect", namespace=namespace)
    async def disconnect(sid, *rest):
        connected.discard(sid)
        print(f"DISCONNECT {sid} {namespace}", flush=True)

    @sio.on("echo", namespace=namespace)
    async def echo(sid, *data):
        return data

    @sio.on("echo-event", namespace=namespace)
    async def echo_event(sid, *data):
        await sio.emit("echoed", data, room=sid, namespace=namespace)

    @sio.on("ask-client", namespace=namespace)
    async def ask_client(sid, payload):
        answer = await sio.call("question", payload, sid=sid, namespace=namespace, timeout=5)
        await sio.emit("answered", {"answer": answer}, room=sid, namespace=namespace)

    @sio.on("ask-client-binary", namespace=namespace)
    async def ask_client_binary(sid):
        answer = await sio.call("question-binary", b"\x01\x02\x03", sid=sid, namespace=namespace, timeout=5)
        await sio.emit("answered-binary", answer, room=sid, namespace=namespace)

    @sio.on("send-binary", namespace=namespace)
    async def send_binary(sid):
        await sio.emit("binary", {"blob": bytes(range(256)), "nested": [b"abc", {"deep": b"\xff\x00"}],
                                  "text": "plain"}, room=sid, namespace=namespace)

    @sio.on("inspect-binary", namespace=namespace)
    async def inspect_binary(sid, payload):
        return {"sizes": [len(v) for v in payload["files"]], "first": list(payload["files"][0][:4])}

    @sio.on("kick", namespace=namespace)
    async def kick(sid):
        await sio.disconnect(sid, namespace=namespace)

    @sio.on("connections", namespace=namespace)
    async def connections(sid):
        return len(connected)


register("/")
register("/admin")


async def main():
    app = web.Application()
    sio.attach(app)
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port, ssl_context=context, reuse_address=True)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(f"READY {port}", flush=True)
    await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
