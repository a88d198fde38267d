"""A TCP proxy in front of Janus' WebSocket that a test can cut: the daemon's signalling goes
through it, so that its WebSocket can be broken (and kept broken for a while) while the
friends' connections and every media path stay as they are."""

from __future__ import annotations

import asyncio
from typing import Optional


class CuttableProxy:
    """``proxy = CuttableProxy(listen_host, listen_port, target_host, target_port); await
    proxy.start()``. ``cut()`` resets every connection through it both ways and refuses new
    ones (accepted, then reset) until ``restore()``."""

    def __init__(self, listen_host: str, listen_port: int, target_host: str, target_port: int) -> None:
        self.listen_host = listen_host
        self.listen_port = listen_port
        self.target_host = target_host
        self.target_port = target_port
        self.refusing = False
        #: Connections accepted (refused ones included), for the tests' checks.
        self.accepted = 0
        self._server: Optional[asyncio.Server] = None
        self._links: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()

    @property
    def url(self) -> str:
        return f"ws://{self.listen_host}:{self.listen_port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, self.listen_host, self.listen_port)

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    def cut(self) -> None:
        """Resets every connection (an RST each way: nothing is closed politely) and refuses new ones."""
        self.refusing = True
        for client, upstream in list(self._links):
            client.transport.abort()
            upstream.transport.abort()
        self._links.clear()

    def restore(self) -> None:
        self.refusing = False

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self.refusing:
            writer.transport.abort()
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError:
            writer.transport.abort()
            return
        link = (writer, upstream_writer)
        self._links.add(link)
        try:
            await asyncio.gather(self._pipe(reader, upstream_writer), self._pipe(upstream_reader, writer))
        finally:
            self._links.discard(link)
            writer.transport.abort()
            upstream_writer.transport.abort()

    @staticmethod
    async def _pipe(source: asyncio.StreamReader, destination: asyncio.StreamWriter) -> None:
        try:
            while chunk := await source.read(65536):
                destination.write(chunk)
                await destination.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            destination.close()
