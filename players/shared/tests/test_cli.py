"""The run of a reference player (playercore.cli): what it logs of a task that does not end."""

from __future__ import annotations

import asyncio

import pytest

from playercore.cli import awaiting

pytestmark = pytest.mark.asyncio


async def test_a_waiting_task_is_described_by_its_chain_of_awaits():
    released = asyncio.Event()

    async def drawing():
        await released.wait()

    async def following():
        await drawing()
    task = asyncio.get_running_loop().create_task(following())
    await asyncio.sleep(0)  # it runs up to its wait
    try:
        assert awaiting(task).startswith("following (test_cli.py:"), awaiting(task)
        assert " > drawing (test_cli.py:" in awaiting(task) and awaiting(task).endswith(")")
    finally:
        released.set()
        await task
