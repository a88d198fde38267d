"""An overlay's bridge posts within its budget: a page that floods the bridge does not hold the
next overlay back. (A scenario of both players: see player_fixtures.py.)"""

from __future__ import annotations

import asyncio

import pytest
from player_support import emit_overlay, eventually, logged, next_event, overlay_spec

pytestmark = pytest.mark.asyncio
WAIT = 20.0


async def test_a_flood_of_bridge_posts_does_not_hold_the_next_overlay_back(backend, viewer, player, pages):
    stream = viewer.events(types=["overlay."])
    await asyncio.wait_for(stream.open(), WAIT)
    await emit_overlay(backend, overlay_spec("tl-flood", f"{pages.base_url}/flood.html?count=20000&big=4"))
    flood = (await next_event(stream, "overlay.show"))["overlayId"]
    await next_event(stream, "overlay.reveal", flood)
    assert await eventually(lambda: pages.report("flooded"), "the flood posted", timeout=60) == "20004"
    # The posts of 2 MiB came first: refused at once (not sent, to be answered -32600 each).
    await eventually(lambda: logged(player, f"overlay {flood}: refused a bridge post of 2097"),
                     "the posts of 2 MiB refused")

    # The next overlay (it replaces the flooding one) is not held back behind 20,000 posts.
    await emit_overlay(backend, overlay_spec("tl-after", f"{pages.base_url}/solid.html?color=0,255,0"))
    following = (await next_event(stream, "overlay.show"))["overlayId"]
    await next_event(stream, "overlay.reveal", following, timeout=WAIT)
    assert f"overlay {flood}: more bridge posts than the player queues" in player.log()

