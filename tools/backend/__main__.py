"""Entry point of ``python3 -m tools.backend``."""

import sys

from .server import main

sys.exit(main())
