"""The scenarios both reference players share (players/shared/tests/scenario_*.py: placement,
answers, a bridge flood, dialogs, predict buttons, failed and replaced overlays, a daemon
restart, play tickets, the voice panel), on the Chromium player."""

import pytest
from scenario_answer import *  # noqa: F401,F403  (their test functions are collected here)
from scenario_bridge import *  # noqa: F401,F403
from scenario_buttons import *  # noqa: F401,F403
from scenario_dialogs import *  # noqa: F401,F403
from scenario_frames import *  # noqa: F401,F403
from scenario_playback import *  # noqa: F401,F403
from scenario_voice import *  # noqa: F401,F403

pytestmark = pytest.mark.asyncio
