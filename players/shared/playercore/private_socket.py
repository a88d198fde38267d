"""A Unix socket only the player's own user (and root) may use: mode 0600, and every peer's uid
checked (SO_PEERCRED) in case the mode was opened. The Chromium player serves its DevTools
socket on it, the WPE player its host socket."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path

log = logging.getLogger(__name__)

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, str], Awaitable[None]]


async def serve_private(path: Path, handler: Handler, limit: int, what: str) -> asyncio.AbstractServer:
    """Listens on ``path`` (which must not exist); ``handler(reader, writer, name)`` serves each
    peer of this uid or root (``name`` says which, for the log); others are cut off at once.

    ``path`` appears only once the socket listens: bind() makes the file, and until listen() a
    peer that found it is refused, so the socket is bound under a temporary name beside it and
    linked to ``path`` once it listens (a link, not a rename: an existing ``path`` is an error,
    not replaced)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    binding = path.with_name(f".{secrets.token_hex(4)}")
    try:
        os.fchmod(listener.fileno(), 0o600)  # Linux gives the socket file this mode at bind
        listener.bind(str(binding))
        try:
            listener.listen(8)
            os.link(binding, path)
        finally:
            binding.unlink()
        listener.setblocking(False)
    except OSError:
        listener.close()
        raise
    serial = iter(range(1, 1 << 62))

    async def admit(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("socket")
        pid, uid, _ = struct.unpack("3i", peer.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                          struct.calcsize("3i")))
        if uid not in (0, os.geteuid()):
            log.warning("refused a %s client of uid %d (pid %d)", what, uid, pid)
            writer.transport.abort()
            return
        await handler(reader, writer, f"#{next(serial)} (pid {pid})")

    server = await asyncio.start_unix_server(admit, sock=listener, limit=limit)
    log.info("%s socket at %s (mode 0600, uid %d and root only)", what, path, os.geteuid())
    return server
