"""DevTools messages over a byte stream: JSON objects separated by NUL bytes, as Chromium speaks
on its ``--remote-debugging-pipe`` (it reads fd 3 and writes fd 4), and as the player's DevTools
socket speaks to its clients."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any, Optional, Protocol

log = logging.getLogger(__name__)

SEPARATOR = b"\0"
# A message larger than this is skipped unread (it streams through a bounded buffer): a
# screenshot of a 4K screen is about 20 MiB of base64; a page's binding call can be anything.
MAX_MESSAGE_BYTES = 64 << 20

Message = dict[str, Any]


class MessageChannel(Protocol):
    """Whole DevTools messages in both directions."""

    async def send(self, message: Message) -> None:
        """Sends one message; ``ConnectionError`` when the peer is gone."""

    async def receive(self) -> Optional[Message]:
        """The next message, or None once the peer closed its side."""

    async def close(self) -> None:
        """Closes both directions."""


class NulFramedChannel:
    """A :class:`MessageChannel` over an asyncio reader and writer, NUL-separated."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 read_transport: Optional[asyncio.BaseTransport] = None) -> None:
        self._reader = reader
        self._writer = writer
        self._read_transport = read_transport  # when reading and writing are two transports

    @classmethod
    async def over_pipe(cls, read_fd: int, write_fd: int) -> "NulFramedChannel":
        """The channel over two pipe ends (both are owned by the channel from now on)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
        read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                         os.fdopen(read_fd, "rb", 0))
        # A stream protocol for the writing end too: it gives the writer its flow control and
        # its wait for the close (nothing is read through it).
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(write_fd, "wb", 0))
        return cls(reader, asyncio.StreamWriter(transport, protocol, None, loop), read_transport)

    @classmethod
    async def connect_unix(cls, path: str) -> "NulFramedChannel":
        """The channel to a Unix socket that speaks it (the player's ``--devtools-socket``)."""
        reader, writer = await asyncio.open_unix_connection(path, limit=MAX_MESSAGE_BYTES)
        return cls(reader, writer)

    @property
    def writer(self) -> asyncio.StreamWriter:
        return self._writer

    def encode(self, message: Message) -> bytes:
        return json.dumps(message, separators=(",", ":")).encode() + SEPARATOR

    async def send(self, message: Message) -> None:
        self._writer.write(self.encode(message))
        await self._writer.drain()

    async def receive(self) -> Optional[Message]:
        while True:
            try:
                try:
                    frame = await self._reader.readuntil(SEPARATOR)
                except asyncio.LimitOverrunError as error:
                    await self._skip_message(error.consumed)
                    continue
            except (asyncio.IncompleteReadError, ConnectionError, OSError):
                return None
            try:
                message = json.loads(frame[:-1])
            except ValueError:
                log.warning("a DevTools message that is not JSON (%d bytes): skipped", len(frame))
                continue
            if isinstance(message, dict):
                return message

    async def _skip_message(self, buffered: int) -> None:
        """Discards a message over the limit up to its separator, a bounded chunk at a time."""
        skipped = 0
        while True:
            await self._reader.readexactly(buffered)
            skipped += buffered
            try:
                skipped += len(await self._reader.readuntil(SEPARATOR))
                break
            except asyncio.LimitOverrunError as error:
                buffered = error.consumed
        log.warning("a DevTools message over %d MiB (%d bytes) was skipped", MAX_MESSAGE_BYTES >> 20, skipped)

    async def close(self) -> None:
        """Closes at once: what was not written yet is dropped (the peer is going away)."""
        self._writer.transport.abort()
        if self._read_transport is not None:
            self._read_transport.close()
