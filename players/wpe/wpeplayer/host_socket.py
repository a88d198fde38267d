"""``--host-socket PATH``: the host's control protocol (players/wpe/README.md) for clients of the
player's own uid and root (a test's remote: keys, clicks, the views' DOM), beside the player.

The player holds the host's only control channel (its stdin and stdout); each client of this
socket speaks the same JSON lines as if it were the host's: it is sent the host's ``ready``
first, its commands go to the host under ids of the player's and their replies come back under
its own ids, and every event of the host from then on is sent to every client. A client that
leaves more than ``MAX_CLIENT_BACKLOG`` unread is disconnected.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any, Optional

from playercore.private_socket import serve_private
from wpehost import HostError, WpeHost

log = logging.getLogger(__name__)

MAX_LINE = 64 << 20
MAX_CLIENT_BACKLOG = 64 << 20


class HostSocket:
    def __init__(self, host: WpeHost) -> None:
        self.host = host
        self._clients: set[asyncio.StreamWriter] = set()
        self._server: Optional[asyncio.AbstractServer] = None
        self._path: Optional[Path] = None
        host.listen(self._broadcast)

    async def serve(self, path: Path) -> None:
        """Listens on ``path`` (which must not exist): mode 0600, peers of this uid or root."""
        self._server = await serve_private(path, self._serve_client, MAX_LINE, "host")
        self._path = path

    async def close(self) -> None:
        """Stops serving (the socket removed) and ends every client."""
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._path is not None:
            self._path.unlink(missing_ok=True)
            self._path = None
        for writer in list(self._clients):
            writer.transport.abort()
        self._clients.clear()

    async def _serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str) -> None:
        log.info("host client %s connected", name)
        self._clients.add(writer)
        self._write(writer, self.host.ready)
        try:
            while line := await reader.readline():
                self._forward(writer, line)
        except (ConnectionError, ValueError):  # ValueError: a line over MAX_LINE
            pass
        finally:
            self._clients.discard(writer)
            writer.transport.abort()
            log.info("host client %s left", name)

    def _forward(self, writer: asyncio.StreamWriter, line: bytes) -> None:
        try:
            command = json.loads(line)
        except ValueError:
            command = None
        if not isinstance(command, dict) or not isinstance(command.get("cmd"), str):
            self._write(writer, {"event": "error", "message": "a command is one JSON object with a cmd",
                                 **({"id": command["id"]} if isinstance(command, dict) and "id" in command else {})})
            return
        their_id = command.get("id")
        fields = {key: value for key, value in command.items() if key not in ("cmd", "id")}
        try:
            reply = self.host.send(command["cmd"], **fields)
        except HostError as error:
            self._write(writer, {"event": "error", "id": their_id, "message": str(error)})
            return

        def answered(future: asyncio.Future[dict[str, Any]]) -> None:
            if not future.cancelled() and future.exception() is None:
                self._write(writer, {**future.result(), "id": their_id})
        reply.add_done_callback(answered)

    def _broadcast(self, event: dict[str, Any]) -> None:
        for writer in list(self._clients):
            self._write(writer, event)

    def _write(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        if writer.is_closing():
            return
        writer.write((json.dumps(message) + "\n").encode())
        if writer.transport.get_write_buffer_size() > MAX_CLIENT_BACKLOG:
            log.warning("a host client leaves over %d MiB unread: disconnecting it", MAX_CLIENT_BACKLOG >> 20)
            self._clients.discard(writer)
            writer.transport.abort()
