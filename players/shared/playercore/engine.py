"""What the player needs of its web engine: the TV page, one frame or view per overlay, input,
screenshots. players/web implements it with Chromium over the DevTools protocol
(``webplayer.screen.Screen``), players/wpe with WPE WebKit over wpe-host
(``wpeplayer.engine.WpeEngine``); everything else (``playercore.player.Player``) is shared.

The TV page (players/shared/page: ``tv.html``, ``tv.js``, ``tv.css``, ``spatial.js``) is the
same in both: the engine loads it full screen, calls its ``window.tv`` API and hands its reports
to ``on_report``. Reports about the engine's own business (in the WPE player: which view has the
remote's focus, the video the host plays) are the engine's and are not passed on.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

from .outcomes import LoadOutcome
from .placement import Box


class Engine(abc.ABC):
    """The screen of a player: the TV page and the overlays above the video.

    Callbacks, set by the player: ``on_loaded(LoadOutcome)`` once per overlay, ``on_bridge(
    overlay_id, message)`` for each post of an overlay's page to
    ``window.webkit.messageHandlers.IOS``, ``on_report(dict)`` for what the TV page reported (the
    viewer's actions, the video's state), ``on_restored()`` once the TV page was loaded again
    after it had left (it is empty: the player redraws it).
    """

    #: What the engine raises when the page does not answer (besides RuntimeError,
    #: ConnectionError and asyncio.TimeoutError): the player logs it and goes on.
    page_errors: tuple[type[BaseException], ...] = ()

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.on_loaded: Callable[[LoadOutcome], None] = lambda outcome: None
        self.on_bridge: Callable[[str, str], None] = lambda overlay_id, message: None
        self.on_report: Callable[[dict[str, Any]], None] = lambda report: None
        self.on_restored: Callable[[], None] = lambda: None

    @abc.abstractmethod
    async def tv(self, function: str, *arguments: Any) -> Any:
        """Calls ``window.tv.<function>(...arguments)`` in the TV page (awaiting a promise it
        returns); its value."""

    @abc.abstractmethod
    async def show_overlay(self, overlay: dict[str, Any], box: Box) -> None:
        """Loads the overlay (an ``overlay.show``'s data) hidden and transparent at ``box``,
        replacing one of the same id; its outcome comes to ``on_loaded``."""

    @abc.abstractmethod
    async def reveal_overlay(self, overlay_id: str) -> bool:
        """Shows a loaded overlay and gives it the remote's focus (unless a dialog is open);
        False when there is no such overlay."""

    @abc.abstractmethod
    async def remove_overlay(self, overlay_id: str) -> None:
        """Destroys the overlay's frame or view, and with it its page."""

    @abc.abstractmethod
    async def post(self, overlay_id: str, message: Any) -> bool:
        """``window.postMessage(JSON.stringify(message), '*')`` in the overlay's page; returns
        once the page's listeners ran (bounded), False when the overlay has no page."""

    @abc.abstractmethod
    def load_timed_out(self, overlay_id: str, seconds: float) -> Optional[LoadOutcome]:
        """The overlay did not load in ``seconds``: its outcome, unless one was reported."""

    @abc.abstractmethod
    async def settle(self) -> None:
        """Waits (bounded) until what the pages changed is on screen."""

    @abc.abstractmethod
    async def screenshot(self, path: Path) -> None:
        """A PNG of the whole screen, written whole or not at all."""

    @abc.abstractmethod
    async def press(self, key: str) -> None:
        """A remote key (``ArrowUp``, ``Enter``, ``Escape``, ...) as real input, to whatever has the focus."""

    @abc.abstractmethod
    async def click(self, x: float, y: float) -> None:
        """A real click at a point of the screen."""


def post_script(message: Any) -> str:
    """The script that delivers an ``overlay.post``: it posts ``JSON.stringify(message)`` to the
    page's window and resolves once the page's own ``message`` listeners ran."""
    text = json.dumps(json.dumps(message))
    return ("new Promise(function (done) {"
            " window.addEventListener('message', function () { setTimeout(done, 0); }, {once: true});"
            f" window.postMessage({text}, '*'); }})")


def tv_call(function: str, arguments: tuple[Any, ...]) -> str:
    """The expression ``window.tv.<function>(...)`` with the arguments as JSON literals."""
    return f"window.tv.{function}({', '.join(json.dumps(argument) for argument in arguments)})"


#: The TV page's files (players/shared/page), loaded from a folder the engine can read.
PAGE_DIR = Path(__file__).resolve().parents[1] / "page"
TV_PAGE_FILES = ("tv.html", "tv.css", "tv.js", "spatial.js", "host-video.js")
