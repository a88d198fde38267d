"""A raw HTTP/1.1 peer for the HTTP client's tests (Tests/HTTPTests/HTTPClientTests.swift).

Speaks bytes by hand so that tests get exactly the framing they ask for. Prints ``READY <port>``
once listening on 127.0.0.1, then serves until killed. With ``--cert``/``--key`` it speaks TLS.

Paths (any method; the request body is read by its Content-Length):
  /echo              200 JSON {method, target, headers, body, connection}: what arrived
  /length?n=N        200 with a Content-Length body of N bytes ("x" repeated)
  /chunked           200 chunked, in several writes, with chunk extensions and trailers
  /close-delimited   200 without Content-Length; the body ends when the peer closes
  /connection        200 {"connection": K}: the number of the TCP connection that carried it
  /close-after       as /connection, then the peer closes that kept-alive connection
  /garbage           bytes that are not HTTP, then close
  /slow?ms=M         the head at once, then one body byte every 50 ms for M ms
  /hang              reads the request and never answers
  /drop              reads the request and closes the connection without a byte of reply
  /open              200 {"open": K, "accepted": N}: connections open now (this one included) and accepted so far
  /requests?path=P   200 {"count": K}: the requests for path P that arrived so far
"""

import argparse
import asyncio
import json
import ssl
from urllib.parse import parse_qs, urlsplit

accepted = 0
open_connections = 0
requests_per_path: dict[str, int] = {}


def reply(status: int, body: bytes, headers: list[tuple[str, str]] | None = None) -> bytes:
    head = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}"]
    head += [f"{name}: {value}" for name, value in headers or []]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def read_request(reader: asyncio.StreamReader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = [line.split(":", 1) for line in lines[1:] if line]
    headers = [(name.strip(), value.strip()) for name, value in headers]
    length = next((int(value) for name, value in headers if name.lower() == "content-length"), 0)
    body = await reader.readexactly(length) if length else b""
    return method, target, headers, body


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    global accepted, open_connections
    accepted += 1
    open_connections += 1
    number = accepted
    try:
        while True:
            try:
                method, target, headers, body = await read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            url = urlsplit(target)
            query = parse_qs(url.query)
            path = url.path
            requests_per_path[path] = requests_per_path.get(path, 0) + 1
            if path == "/echo":
                data = {"method": method, "target": target, "headers": headers,
                        "body": body.decode("utf-8", "replace"), "connection": number}
                writer.write(reply(200, json.dumps(data).encode(), [("Content-Type", "application/json")]))
            elif path == "/length":
                writer.write(reply(200, b"x" * int(query["n"][0])))
            elif path == "/chunked":
                writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                for piece in (b"5;ext=1\r\nhello\r\n", b"1\r\n,", b"\r\n6\r\n world\r\n", b"0\r\nX-Trailer: t\r\n\r\n"):
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0.01)
            elif path == "/close-delimited":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil ")
                await writer.drain()
                await asyncio.sleep(0.02)
                writer.write(b"the close")
                return
            elif path in ("/connection", "/close-after"):
                writer.write(reply(200, json.dumps({"connection": number}).encode()))
                if path == "/close-after":
                    await writer.drain()
                    return
            elif path == "/garbage":
                writer.write(b"<html>this is not HTTP</html>\r\n\r\n")
                return
            elif path == "/slow":
                total_ms = int(query["ms"][0])
                count = max(1, total_ms // 50)
                writer.write(f"HTTP/1.1 200 OK\r\nContent-Length: {count}\r\n\r\n".encode())
                for _ in range(count):
                    await writer.drain()
                    await asyncio.sleep(0.05)
                    writer.write(b"s")
            elif path == "/hang":
                await reader.read()  # until the client goes away
                return
            elif path == "/drop":
                return
            elif path == "/requests":
                count = requests_per_path.get(query["path"][0], 0)
                writer.write(reply(200, json.dumps({"count": count}).encode()))
            elif path == "/open":
                writer.write(reply(200, json.dumps({"open": open_connections, "accepted": accepted}).encode()))
            else:
                writer.write(reply(404, b"not found"))
            await writer.drain()
    finally:
        open_connections -= 1
        writer.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
