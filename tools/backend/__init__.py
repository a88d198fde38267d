"""Reference Interactive backend for interactived: a local stand-in for the real server.

Run it from the repository root with ``python3 -m tools.backend --help``. The wire contract it
follows is shared/design/BACKEND.md; docs/backend.md describes every event, endpoint, admin
call and fault knob.
"""
