"""Exceptions raised by the client."""

from __future__ import annotations

from typing import Any, Optional


class DaemonError(Exception):
    """The daemon answered a request with a JSON-RPC error.

    ``code`` is the JSON-RPC code (-32000 for the daemon's own errors, -32602 for bad params,
    ...), ``name`` the stable dotted name from ``error.data.name`` (``interactive.NoRoom``, ...;
    ``None`` for the generic JSON-RPC errors), ``message`` the daemon's text and ``data`` the
    whole ``error.data`` object (``data["missing"]`` for ``interactive.NotConfigured``).
    """

    def __init__(self, code: int, message: str, name: Optional[str] = None,
                 data: Optional[dict[str, Any]] = None) -> None:
        super().__init__(f"{name or code}: {message}")
        self.code = code
        self.message = message
        self.name = name
        self.data = data if data is not None else {}

    @classmethod
    def from_reply(cls, error: Any) -> "DaemonError":
        """Builds the exception from a reply's ``error`` member, whatever its shape."""
        if not isinstance(error, dict):
            return cls(-32603, f"malformed error reply: {error!r}")
        data = error.get("data")
        data = data if isinstance(data, dict) else {}
        name = data.get("name")
        code = error.get("code")
        return cls(code if isinstance(code, int) else -32603, str(error.get("message", "")),
                   name if isinstance(name, str) else None, data)


class ConnectionClosed(ConnectionError):
    """The connection to the daemon is closed: pending calls and event streams end with it."""
