"""Helpers of the WPE player's tests: the player as a subprocess with its host socket, and the
test's remote: a client of that socket (the host's control protocol) that presses the remote's
keys, clicks, and reads the TV page and the overlays' pages. What every player's tests use is in
players/shared/tests/player_support.py."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

from player_support import PlayerProcess  # noqa: E402  (the conftest puts players/shared/tests on sys.path)
from playercore.engine import tv_call  # noqa: E402
from wpehost import WpeHost, descendants  # noqa: E402

PLAYER_DIR = Path(__file__).resolve().parents[2]
KEY_PAUSE = 0.15  # after each key, as the Chromium player's tests do: what it set off (a focus move) happens


class WpePlayerProcess(PlayerProcess):
    """``players/wpe/player`` on the daemon's socket, its host socket the remote's."""

    def __init__(self, socket_path: str, tmp: Path, extra: tuple[str, ...] = ()) -> None:
        super().__init__(PLAYER_DIR / "player", "--host-socket", socket_path, tmp, extra)
        self.host_socket = self.control_socket

    def processes(self) -> list[int]:
        """The player and every process below it (the host, WebKit's web and network processes)."""
        return [self.process.pid, *descendants(self.process.pid)]

    async def attach_remote(self) -> "Remote":
        return await Remote.attach(self.host_socket)


def command_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


class Remote:
    """The test's client of the player's host socket."""

    def __init__(self, host: WpeHost) -> None:
        self.host = host

    @classmethod
    async def attach(cls, host_socket: Path) -> "Remote":
        return cls(await WpeHost.connect(host_socket))

    async def state(self) -> dict[str, Any]:
        return await self.host.run_js("tv", "window.tv.state()")

    async def press(self, *keys: str) -> None:
        """Real key events to the view with the remote's focus, each seen by its page."""
        for key in keys:
            await self.host.key(key)
            await asyncio.sleep(KEY_PAUSE)

    async def click(self, x: float, y: float) -> None:
        """A click on what the screen shows: the host sends it to the topmost view painted there,
        so the TV page's latest paint (a button just drawn) is let reach the host first."""
        await self.host.settle("tv", 150, 0.6)
        await self.host.click(round(x), round(y))

    async def tv(self, function: str, *arguments: Any) -> Any:
        """``window.tv.<function>(...)`` in the TV page."""
        return await self.host.run_js("tv", "return await " + tv_call(function, arguments), is_async=True)

    async def overlay_views(self) -> list[dict[str, Any]]:
        """The overlays' views (list-views)."""
        return [view for view in (await self.host.request("list-views"))["views"] if view["viewId"] != "tv"]

    async def frame_urls(self) -> list[str]:
        """The URLs of the overlays' views (the Chromium remote's frames)."""
        return [view["url"] for view in await self.overlay_views()]

    async def in_frame(self, url_part: str, expression: str, world: str = "page") -> Any:
        """Evaluates ``expression`` in the overlay view whose URL contains ``url_part`` (None while
        there is no such view)."""
        view = next((v for v in await self.overlay_views() if url_part in v["url"]), None)
        if view is None:
            return None
        return await self.host.run_js(view["viewId"], expression, world=world)

    async def focused_in_frame(self, url_part: str) -> Optional[str]:
        """The text of the focused element in that overlay's page (None: nothing focused)."""
        return await self.in_frame(url_part, "document.activeElement && document.activeElement !== document.body"
                                             " ? document.activeElement.textContent.trim() : null")

    async def close(self) -> None:
        await self.host.close()
