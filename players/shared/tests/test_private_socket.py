"""The players' private socket (playercore.private_socket): its path appears only once it
listens, with mode 0600, and an existing path is refused."""

from __future__ import annotations

import asyncio
import socket
import stat
import tempfile
from pathlib import Path

import pytest

from playercore.private_socket import serve_private

pytestmark = pytest.mark.asyncio


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str) -> None:
    writer.write(await reader.readline())
    await writer.drain()
    writer.close()


@pytest.fixture
def folder():
    with tempfile.TemporaryDirectory(prefix="private-socket-", dir="/tmp") as path:
        yield Path(path)


async def test_the_path_appears_only_once_the_socket_listens(folder, monkeypatch):
    path = folder / "s.sock"
    seen_at_listen = []
    listen = socket.socket.listen

    def watched_listen(self, *arguments):
        seen_at_listen.append(path.exists())  # a peer that found the path now would be refused
        return listen(self, *arguments)
    monkeypatch.setattr(socket.socket, "listen", watched_listen)

    server = await serve_private(path, _echo, 1 << 16, "test")
    try:
        assert seen_at_listen[0] is False  # (asyncio's server calls listen() again)
        assert stat.S_ISSOCK(path.stat().st_mode) and stat.S_IMODE(path.stat().st_mode) == 0o600
        assert [entry.name for entry in folder.iterdir()] == ["s.sock"]  # no temporary name left
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), 5)
        writer.write(b"hello\n")
        assert await asyncio.wait_for(reader.readline(), 5) == b"hello\n"
        writer.close()
    finally:
        server.close()


async def test_an_existing_path_is_refused_and_left_alone(folder):
    path = folder / "s.sock"
    path.write_text("someone else's")
    with pytest.raises(FileExistsError):
        await serve_private(path, _echo, 1 << 16, "test")
    assert path.read_text() == "someone else's"
    assert [entry.name for entry in folder.iterdir()] == ["s.sock"]
