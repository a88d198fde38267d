"""The voice panel against the real voice manager (players/shared/tests/scenario_voice_room.py),
on the WPE player: its fixtures replace the daemon and the backend in this module only."""

import pytest
from scenario_voice_room import *  # noqa: F401,F403  (the test and its fixtures are collected here)

pytestmark = pytest.mark.asyncio
