"""The shared player logic's unit tests (no engine, no daemon): playercore on the path."""

from __future__ import annotations

import sys
from pathlib import Path

SHARED_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = SHARED_DIR.parents[1]
for path in (SHARED_DIR, REPO_ROOT / "clients" / "python"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
