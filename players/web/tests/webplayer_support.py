"""Helpers of the Chromium player's browser tests: the player as a subprocess with its DevTools
socket, and a second DevTools client (through that socket) that plays the remote control and
reads the TV page. What every player's tests use is in players/shared/tests/player_support.py."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

from player_support import PlayerProcess  # noqa: E402  (the conftest puts players/shared/tests on sys.path)
from webplayer.cdp import CDPConnection  # noqa: E402  (the conftest puts players/web on sys.path)
from webplayer.screen import Screen  # noqa: E402

PLAYER_DIR = Path(__file__).resolve().parents[1]


class WebPlayerProcess(PlayerProcess):
    """``players/web/player`` on the daemon's socket, its DevTools socket the remote's."""

    def __init__(self, socket_path: str, tmp: Path, extra: tuple[str, ...] = ()) -> None:
        super().__init__(PLAYER_DIR / "player", "--devtools-socket", socket_path, tmp, extra)
        self.devtools_socket = self.control_socket

    async def attach_remote(self) -> "Remote":
        return await Remote.attach(self.devtools_socket)

    async def browser_processes(self) -> list[tuple[str, int]]:
        """The browser's processes as DevTools lists them: (type, pid), type ``browser``,
        ``renderer``, ``GPU``, a utility's service name."""
        cdp = await CDPConnection.open_unix(str(self.devtools_socket))
        try:
            info = await cdp.send("SystemInfo.getProcessInfo")
        finally:
            await cdp.close()
        return [(str(process["type"]), int(process["id"])) for process in info["processInfo"]]


class Remote:
    """The test's own DevTools session on the TV page: real key and mouse input, the page's
    state, the browser's targets."""

    def __init__(self, cdp: CDPConnection, session: str) -> None:
        self.cdp = cdp
        self.session = session
        self._screen = Screen(cdp, 0, 0, emulate_size=False)
        self._screen.session = session

    @classmethod
    async def attach(cls, devtools_socket: Path) -> "Remote":
        cdp = await CDPConnection.open_unix(str(devtools_socket))
        targets = (await cdp.send("Target.getTargets"))["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        session = (await cdp.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}))["sessionId"]
        return cls(cdp, session)

    async def state(self) -> dict[str, Any]:
        return await self._screen.tv("state")

    async def press(self, *keys: str) -> None:
        for key in keys:
            await self._screen.press(key)
            await asyncio.sleep(0.15)

    async def click(self, x: float, y: float) -> None:
        await self._screen.click(x, y)

    async def tv(self, function: str, *arguments: Any) -> Any:
        """``window.tv.<function>(...)`` in the TV page."""
        return await self._screen.tv(function, *arguments)

    async def frame_urls(self) -> list[str]:
        targets = (await self.cdp.send("Target.getTargets"))["targetInfos"]
        return [t["url"] for t in targets if t["type"] == "iframe"]

    async def in_frame(self, url_part: str, expression: str) -> Any:
        """Evaluates ``expression`` in the overlay frame whose URL contains ``url_part``
        (None while there is no such frame)."""
        targets = (await self.cdp.send("Target.getTargets"))["targetInfos"]
        frame = next((t for t in targets if t["type"] == "iframe" and url_part in t["url"]), None)
        if frame is None:
            return None
        session = (await self.cdp.send("Target.attachToTarget", {"targetId": frame["targetId"], "flatten": True}))["sessionId"]
        try:
            reply = await self.cdp.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
            return reply.get("result", {}).get("value")
        finally:
            await self.cdp.send("Target.detachFromTarget", {"sessionId": session})

    async def focused_in_frame(self, url_part: str) -> Optional[str]:
        """The text of the focused element inside that overlay frame (None: nothing focused)."""
        return await self.in_frame(url_part, "document.activeElement && document.activeElement !== document.body"
                                             " ? document.activeElement.textContent.trim() : null")

    async def close(self) -> None:
        await self.cdp.close()
