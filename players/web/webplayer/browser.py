"""Chromium started with its DevTools protocol on a pipe, as an unprivileged user with its
sandbox, and stopped with its process group.

The DevTools protocol is on ``--remote-debugging-pipe`` (Chromium reads commands from its fd 3
and writes to its fd 4): there is no port for another process to find, and only the player holds
the pipe's other ends. Started as root, the player runs the browser as another user
(``--browser-user``, by default ``interactived-player``, which scripts/setup creates) through
``setpriv``, so Chromium keeps its sandbox (user namespaces and seccomp; it refuses to run as root
with it) and no other user's process may open its descriptors or read its memory. Its files live
in a folder of the player's (mode 0750, group: the browser user's): ``profile`` (the throw-away
profile) and ``home`` (its HOME), both the browser user's with mode 0700, and ``page`` (the
player's, read-only for the browser: what :meth:`Browser.share` copied there, since the player's
own files may sit where that user cannot read).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import pwd
import shutil
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .channel import NulFramedChannel

log = logging.getLogger(__name__)

DEFAULT_USER = "interactived-player"
# How long Chromium has to exit after SIGTERM before its process group is killed.
STOP_TIMEOUT = 5.0
# Where the pipe's child ends wait before posix_spawn moves them to fds 3 and 4: above both.
FIRST_FREE_FD = 10


def chromium_binary() -> str:
    """Debian's ``chromium`` (installed by scripts/setup)."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise FileNotFoundError("chromium is not installed (scripts/setup installs Debian's chromium)")


@dataclass(frozen=True)
class BrowserUser:
    """The unprivileged user the browser runs as when the player runs as root."""

    name: str
    uid: int
    gid: int

    @classmethod
    def named(cls, name: str) -> "BrowserUser":
        """The user ``name``; ``LookupError`` when it does not exist or is root."""
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            raise LookupError(f"there is no user {name!r} to run the browser as "
                              "(scripts/setup creates interactived-player; or pass --browser-user)") from None
        if entry.pw_uid == 0:
            raise LookupError(f"the browser's user {name!r} is root")
        return cls(name, entry.pw_uid, entry.pw_gid)


class Browser:
    """One Chromium process with a throw-away profile, driven over its DevTools pipe.

    Headless (``--headless=new``) when ``headless`` is true, else a full-screen kiosk window on
    ``$DISPLAY``. Runs with ``--site-per-process`` so every overlay from another site than the
    TV page is its own DevTools target, where the IOS shim is installed before its scripts run.
    ``user`` is who it runs as (None: the player's own user, which must not be root).
    """

    def __init__(self, width: int, height: int, headless: bool, user: Optional[BrowserUser]) -> None:
        if user is None and os.geteuid() == 0:
            raise ValueError("as root the browser runs as another user: pass one")
        self.width = width
        self.height = height
        self.headless = headless
        self.user = user
        self.folder = Path(tempfile.mkdtemp(prefix="interactived-player-"))
        self.profile = self.folder / "profile"
        self.home = self.folder / "home"
        self.page = self.folder / "page"
        for folder in (self.profile, self.home):
            folder.mkdir(mode=0o700)
            if user is not None:
                os.chown(folder, user.uid, user.gid)
        self.page.mkdir(mode=0o755)
        if user is not None:  # the browser user may enter, not rename or replace what is inside
            os.chown(self.folder, -1, user.gid)
            self.folder.chmod(0o750)
        self.pid: Optional[int] = None
        self.exited = asyncio.Event()
        self._pidfd: Optional[int] = None

    def share(self, name: str, source: Path) -> Path:
        """A copy of ``source`` that the browser can read (in its ``page`` folder)."""
        target = self.page / name
        shutil.copyfile(source, target)
        target.chmod(0o644)
        return target

    async def start(self) -> NulFramedChannel:
        """Starts Chromium; returns the DevTools channel over its pipe."""
        to_browser_read, to_browser_write = os.pipe()
        from_browser_read, from_browser_write = os.pipe()
        # The child's ends, moved above 4 so that the moves to 3 and 4 cannot overwrite each other.
        child_read = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD_CLOEXEC, FIRST_FREE_FD)
        child_write = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD_CLOEXEC, FIRST_FREE_FD)
        for fd in (to_browser_read, from_browser_write):
            os.close(fd)
        devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        command = self._command()
        try:
            # posix_spawn, not fork and exec: no Python code runs in the child, whatever threads run.
            # SIGPIPE and SIGXFSZ back to their defaults, as subprocess does (Python ignores them).
            self.pid = os.posix_spawn(command[0], command, self._environment(), setsid=True,
                                      setsigdef=(signal.SIGPIPE, signal.SIGXFSZ), file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
                (os.POSIX_SPAWN_DUP2, child_read, 3), (os.POSIX_SPAWN_DUP2, child_write, 4)])
        finally:
            for fd in (child_read, child_write, devnull):
                os.close(fd)
        self._pidfd = os.pidfd_open(self.pid)
        asyncio.get_running_loop().add_reader(self._pidfd, self._reap)
        return await NulFramedChannel.over_pipe(from_browser_read, to_browser_write)

    def _command(self) -> list[str]:
        arguments = [
            chromium_binary(), f"--user-data-dir={self.profile}", "--remote-debugging-pipe",
            "--site-per-process", "--autoplay-policy=no-user-gesture-required", "--no-first-run",
            "--no-default-browser-check", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-translate",
            "--disable-features=Translate,MediaRouter,DialMediaRouteProvider",
            "--password-store=basic", "--hide-scrollbars", "--mute-audio",
            "--disable-dev-shm-usage", f"--window-size={self.width},{self.height}",
        ]
        if self.headless:
            arguments.append("--headless=new")
        else:
            arguments += ["--kiosk", "--start-fullscreen", "--window-position=0,0"]
        arguments.append("about:blank")
        if self.user is None:
            return arguments
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            raise FileNotFoundError("setpriv is not installed (util-linux; scripts/setup installs it)")
        return [setpriv, f"--reuid={self.user.uid}", f"--regid={self.user.gid}", "--init-groups",
                "--inh-caps=-all", "--", *arguments]

    def _environment(self) -> dict[str, str]:
        if self.user is None:
            return dict(os.environ)
        # Another user's browser gets nothing of root's environment but the display and locale.
        passed = ("DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "LANG", "LANGUAGE", "TZ")
        environment = {name: value for name, value in os.environ.items()
                       if name in passed or name.startswith("LC_")}
        environment.update({"HOME": str(self.home), "USER": self.user.name, "LOGNAME": self.user.name,
                            "PATH": "/usr/local/bin:/usr/bin:/bin", "XDG_CONFIG_HOME": str(self.home / ".config"),
                            "XDG_CACHE_HOME": str(self.home / ".cache")})
        return environment

    def _reap(self) -> None:
        """The browser process ended (its pidfd is readable)."""
        assert self.pid is not None and self._pidfd is not None
        asyncio.get_running_loop().remove_reader(self._pidfd)
        os.waitpid(self.pid, 0)
        self.exited.set()

    async def stop(self) -> None:
        """Terminates Chromium and its helper processes (its process group), then its folder."""
        if self.pid is not None:
            for signum in (signal.SIGTERM, signal.SIGKILL):
                if self.exited.is_set():
                    break
                try:
                    os.killpg(self.pid, signum)
                except ProcessLookupError:
                    pass
                try:
                    async with asyncio.timeout(STOP_TIMEOUT):
                        await self.exited.wait()
                except asyncio.TimeoutError:
                    log.warning("the browser (pid %d) did not exit within %.0f s of %s", self.pid,
                                STOP_TIMEOUT, signal.Signals(signum).name)
            # Helpers (renderers, zygote) may outlive the browser process by a moment.
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self._pidfd is not None:
            if not self.exited.is_set():
                asyncio.get_running_loop().remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        shutil.rmtree(self.folder, ignore_errors=True)
