"""Where the daemon's socket is, by the rule of docs/ipc.md (Transport)."""

from __future__ import annotations

import os
from typing import Mapping, Optional

SYSTEM_SOCKET = "/run/interactived/interactived.sock"


def default_socket_path(environ: Optional[Mapping[str, str]] = None) -> str:
    """``$INTERACTIVED_SOCKET``, else the ``/run`` socket if it exists, else
    ``$XDG_RUNTIME_DIR/interactived.sock``; raises ``LookupError`` when none applies."""
    environ = os.environ if environ is None else environ
    if environ.get("INTERACTIVED_SOCKET"):
        return environ["INTERACTIVED_SOCKET"]
    if os.path.exists(SYSTEM_SOCKET):
        return SYSTEM_SOCKET
    if environ.get("XDG_RUNTIME_DIR"):
        return os.path.join(environ["XDG_RUNTIME_DIR"], "interactived.sock")
    raise LookupError("no daemon socket: pass a path (--socket) or set $INTERACTIVED_SOCKET")
