"""--tls: HTTPS and WSS on the same port, with a certificate made by the openssl CLI."""

from __future__ import annotations

import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from support import Admin, BackendProcess, RecordingClient

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1."""
    tmp = tmp_path_factory.mktemp("tls")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )
    return cert, key


@pytest.fixture(scope="module")
def tls_backend(tmp_path_factory, certificate) -> Iterator[BackendProcess]:
    cert, key = certificate
    process = BackendProcess(tmp_path_factory.mktemp("tls-run"), ["--tls", str(cert), str(key)])
    yield process
    assert process.stop() == 0, process.stderr()


async def test_https_rest_and_wss_socketio(tls_backend: BackendProcess, certificate) -> None:
    assert tls_backend.base_url.startswith("https://127.0.0.1:")
    context = ssl.create_default_context(cafile=str(certificate[0]))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as http:
        admin = Admin(tls_backend.base_url, http)
        async with http.get(f"{tls_backend.base_url}/api/public/vip-status?mediaId=m1",
                            headers={"X-TENANT-ID": "t",
                                     "Authorization": "Bearer token-bob"}) as reply:
            assert await reply.json() == {"vip": False, "bet": False}
        client = RecordingClient(tls_backend.base_url, http_session=http)
        try:
            await client.connect(token="token-alice")
            assert await client.join("m1") == {"ok": True}
            await admin.post("emit", {"event": "overlay", "room": "m1", "payload": {"tls": 1}})
            assert await client.next_event("overlay") == {"tls": 1}
            [record] = await admin.items("handshakes", sid=client.sio.get_sid())
            assert record["userId"] == "alice" and record["transport"] == "websocket"
        finally:
            await client.close()


async def test_plain_http_is_not_served_on_a_tls_port(tls_backend: BackendProcess) -> None:
    plain = tls_backend.base_url.replace("https://", "http://")
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.ClientError):
            async with http.get(f"{plain}/_admin/state",
                                timeout=aiohttp.ClientTimeout(total=5)) as reply:
                await reply.read()
