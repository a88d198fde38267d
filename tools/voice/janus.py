"""Debian's Janus, with its AudioBridge plugin and WebSocket transport only, in the server
namespace of a ``VoiceNetwork``, from a configuration folder generated for one test."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import secrets
import tempfile
import time
from pathlib import Path
from typing import Optional

import websockets

from .netns import VoiceNetwork

JANUS_BINARY = "/usr/bin/janus"
_LIBRARIES = Path("/usr/lib/x86_64-linux-gnu/janus")
WS_PORT = 8188
ADMIN_WS_PORT = 7188


class JanusError(RuntimeError):
    pass


def janus_available() -> Optional[str]:
    """None when Janus and its two modules are installed, else why not."""
    if not os.path.exists(JANUS_BINARY):
        return "Debian's janus package is not installed"
    for module in ("plugins/libjanus_audiobridge.so", "transports/libjanus_websockets.so"):
        if not (_LIBRARIES / module).exists():
            return f"janus has no {module}"
    return None


class JanusServer:
    """``with JanusServer(net) as janus:`` Janus listening on ``janus.url``
    (``ws://<server address>:8188``), gathering ICE candidates on the veth only; stopped and its
    folder removed on exit. ``session_timeout`` is Janus' (seconds; 0 disables it);
    ``reclaim_session_timeout`` how long a session outlives its lost WebSocket, to be claimed
    on a new one (0: it ends with it); ``api_secret`` and ``token_auth_secret`` enable those
    checks (a client then sends ``apisecret``, or a token signed with the secret)."""

    def __init__(self, net: VoiceNetwork, session_timeout: int = 60, api_secret: Optional[str] = None,
                 token_auth_secret: Optional[str] = None, debug_level: int = 4, start_timeout: float = 20.0,
                 reclaim_session_timeout: int = 0) -> None:
        self.net = net
        self.session_timeout = session_timeout
        self.reclaim_session_timeout = reclaim_session_timeout
        self.api_secret = api_secret
        self.token_auth_secret = token_auth_secret
        self.debug_level = debug_level
        self.start_timeout = start_timeout
        self.url = f"ws://{net.server_address}:{WS_PORT}"
        # The Admin API, for what only the server sees (packets received per handle).
        self.admin_url = f"ws://{net.server_address}:{ADMIN_WS_PORT}"
        self.admin_secret = secrets.token_hex(8)
        self.folder: Optional[Path] = None
        self.process: Optional[subprocess.Popen] = None

    @property
    def log_path(self) -> Path:
        assert self.folder is not None
        return self.folder / "janus.log"

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def __enter__(self) -> "JanusServer":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        reason = janus_available()
        if reason:
            raise JanusError(reason)
        self.folder = Path(tempfile.mkdtemp(prefix=f"janus-{self.net.id}-"))
        self._write_configuration(self.folder)
        log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            self.net.server_command([JANUS_BINARY, "--configs-folder", str(self.folder), "--disable-colors"]),
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=self.folder)
        log.close()
        self.net.run_in_box(self._wait_until_ready, timeout=self.start_timeout + 5)

    async def _wait_until_ready(self) -> None:
        """Until Janus answers ``info`` on its WebSocket (it opens it last)."""
        deadline = time.monotonic() + self.start_timeout
        last_error: Optional[BaseException] = None
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise JanusError(f"janus exited with status {self.process.returncode}:\n{self.log()[-3000:]}")
            try:
                async with websockets.connect(self.url, subprotocols=["janus-protocol"], open_timeout=2) as socket:
                    await socket.send(json.dumps({"janus": "info", "transaction": "ready"}))
                    reply = json.loads(await asyncio.wait_for(socket.recv(), 2))
                    if reply.get("janus") == "server_info":
                        return
            except (OSError, asyncio.TimeoutError, websockets.WebSocketException) as error:
                last_error = error
            await asyncio.sleep(0.1)
        raise JanusError(f"janus did not answer info within {self.start_timeout} s ({last_error}):\n{self.log()[-3000:]}")

    def stop(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGINT)
                try:
                    self.process.wait(10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(5)
            self.process = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    async def admin(self, request: str, **fields: object) -> dict:
        """One Admin API request (``list_sessions``, ``list_handles``, ``handle_info``): Janus' reply."""
        async with websockets.connect(self.admin_url, subprotocols=["janus-admin-protocol"], open_timeout=5, max_size=None) as socket:
            await socket.send(json.dumps({"janus": request, "admin_secret": self.admin_secret, "transaction": secrets.token_hex(6),
                                          **fields}))
            reply = json.loads(await asyncio.wait_for(socket.recv(), 5))
        if reply.get("janus") != "success":
            raise JanusError(f"{request}: {reply}")
        return reply

    async def handle_info(self, session_id: int, handle_id: int) -> dict:
        """The Admin API's ``handle_info`` of one handle (its ``info`` object)."""
        return (await self.admin("handle_info", session_id=session_id, handle_id=handle_id))["info"]

    async def audio_packets_received(self, session_id: int, handle_id: int) -> int:
        """RTP audio packets Janus received on a handle so far."""
        return audio_packets(await self.handle_info(session_id, handle_id))

    async def audio_packets_from(self, display: str) -> Optional[int]:
        """RTP audio packets Janus received so far from the AudioBridge participant called
        ``display`` (the handle whose participant has that name), or None when there is none."""
        for session in (await self.admin("list_sessions")).get("sessions", []):
            try:
                handles = (await self.admin("list_handles", session_id=session)).get("handles", [])
                for handle in handles:
                    info = await self.handle_info(session, handle)
                    if info.get("plugin_specific", {}).get("display") == display:
                        return audio_packets(info)
            except JanusError:
                continue  # the session or handle ended meanwhile
        return None

    def _write_configuration(self, folder: Path) -> None:
        # Only the two modules the lab needs are visible to Janus: no HTTP transport, no other plugin.
        for kind, module in (("plugins", "libjanus_audiobridge.so"), ("transports", "libjanus_websockets.so")):
            (folder / kind).mkdir()
            os.symlink(_LIBRARIES / kind / module, folder / kind / module)
        for kind in ("events", "loggers"):
            (folder / kind).mkdir()
        checks = f'\tadmin_secret = "{self.admin_secret}"\n'
        if self.api_secret:
            checks += f'\tapi_secret = "{self.api_secret}"\n'
        if self.token_auth_secret:
            checks += f'\ttoken_auth = true\n\ttoken_auth_secret = "{self.token_auth_secret}"\n'
        (folder / "janus.jcfg").write_text(f"""general: {{
\tconfigs_folder = "{folder}"
\tplugins_folder = "{folder}/plugins"
\ttransports_folder = "{folder}/transports"
\tevents_folder = "{folder}/events"
\tloggers_folder = "{folder}/loggers"
\tdebug_level = {self.debug_level}
\tinterface = "{self.net.server_address}"
\tsession_timeout = {self.session_timeout}
\treclaim_session_timeout = {self.reclaim_session_timeout}
{checks}}}
certificates: {{
}}
media: {{
\tipv6 = false
\trtp_port_range = "20000-40000"
}}
nat: {{
\tnice_debug = false
\tfull_trickle = true
\tice_lite = false
\tice_tcp = false
\tignore_mdns = true
\tice_enforce_list = "{self.net.server_link}"
}}
plugins: {{
}}
transports: {{
}}
loggers: {{
}}
events: {{
\tbroadcast = false
}}
""")
        (folder / "janus.transport.websockets.jcfg").write_text(f"""general: {{
\tjson = "compact"
\tws = true
\tws_port = {WS_PORT}
\tws_ip = "{self.net.server_address}"
\twss = false
}}
admin: {{
\tadmin_ws = true
\tadmin_ws_port = {ADMIN_WS_PORT}
\tadmin_ws_ip = "{self.net.server_address}"
\tadmin_wss = false
}}
""")
        (folder / "janus.plugin.audiobridge.jcfg").write_text("general: {\n}\n")


def audio_packets(info: dict) -> int:
    """The RTP audio packets of a ``handle_info`` ``info``."""
    media = info.get("webrtc", {}).get("media", {})
    return sum(entry.get("stats", {}).get("in", {}).get("packets", 0) for entry in media.values() if entry.get("type") == "audio")
