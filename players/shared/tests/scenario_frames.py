"""Overlay frames: where they land, failed loads, replaced frames, a daemon restart. (A scenario of both players: see player_fixtures.py.)"""

from __future__ import annotations

import asyncio
import socket

import interactived_client
import pytest
from player_support import SCREEN, coloured_box, emit_overlay, eventually, next_event, overlay_spec

pytestmark = pytest.mark.asyncio
WAIT = 20.0
MAGENTA = (255, 0, 255)


async def test_each_location_lands_where_its_placement_says(backend, viewer, player, pages):
    stream = viewer.events(types=["overlay."])
    await asyncio.wait_for(stream.open(), WAIT)
    width_pct, height_pct = 30, 25
    width, height = SCREEN[0] * width_pct // 100, SCREEN[1] * height_pct // 100
    for location in range(9):
        url = f"{pages.base_url}/solid.html?color=255,0,255&n={location}"
        await emit_overlay(backend, overlay_spec(f"loc-{location}", url, location=location,
                                                 width=width_pct, height=height_pct), tracked=False)
        show = await next_event(stream, "overlay.show")
        assert show["placement"] == {"location": location, "widthPct": width_pct, "heightPct": height_pct}
        await next_event(stream, "overlay.reveal", show["overlayId"])
        shot = await eventually(lambda: _screenshot(player, show["overlayId"]), "the reveal screenshot")
        column, row = location % 3, location // 3
        left, top = column * (SCREEN[0] - width) // 2, row * (SCREEN[1] - height) // 2
        box = coloured_box(shot, MAGENTA)
        assert box is not None, f"location {location}: no overlay on the screenshot {shot}"
        expected = (left, top, left + width, top + height)
        assert all(abs(a - b) <= 2 for a, b in zip(box, expected)), \
            f"location {location}: the overlay is at {box}, its placement says {expected}"


async def test_a_page_that_does_not_load_is_reported_failed_and_dismissed(backend, viewer, player, remote):
    with socket.socket() as probe:  # a port where nothing listens: connection refused
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    stream = viewer.events(types=["overlay."])
    await asyncio.wait_for(stream.open(), WAIT)
    cases = [("refused", f"http://127.0.0.1:{closed_port}/quiz.html"),
             ("missing", f"{backend.base_url}/templates/no-such-template.html")]
    for timeline, url in cases:
        record = await asyncio.to_thread(backend.admin_sync, "emit", {
            "event": "overlay", "room": "m1", "overlay": overlay_spec(timeline, url), "trackingId": "auto"})
        overlay_id = (await next_event(stream, "overlay.show"))["overlayId"]

        async def rendered_ack():
            acks = (await asyncio.to_thread(backend.admin_sync,
                                            f"acks?trackingId={record['trackingId']}&stage=rendered"))["items"]
            return acks[0] if acks else None
        ack = await eventually(rendered_ack, f"the rendered ack of {timeline}")
        assert ack["status"] == "failed", ack
        assert f"overlay {overlay_id} failed" in player.log()
        # Then the player destroys the frame and dismisses the overlay (docs/players.md, section 6).
        assert (await next_event(stream, "overlay.hide", overlay_id))["reason"] == "dismissed"
        await eventually(lambda: _no_overlays(remote), f"the frame of {timeline} gone")


@pytest.mark.player_args("--silent-page-timeout", "2")
async def test_a_silent_page_that_never_expires_is_dismissed(backend, viewer, player, remote, pages):
    stream = viewer.events(types=["overlay."])
    await asyncio.wait_for(stream.open(), WAIT)
    await emit_overlay(backend, overlay_spec("silent", f"{pages.base_url}/silent.html", duration=0))
    show = await next_event(stream, "overlay.show")
    assert show["durationSec"] == 0
    hidden = await next_event(stream, "overlay.hide", show["overlayId"])
    assert hidden["reason"] == "dismissed"  # never revealed: the daemon waited for the page
    assert f"overlay {show['overlayId']} loaded" in player.log()
    assert "never said it is ready: dismissing it" in player.log()
    await eventually(lambda: _no_overlays(remote), "the silent page's frame gone")


async def test_a_replaced_overlay_frame_is_gone(backend, viewer, player, remote):
    stream = viewer.events(types=["overlay."])
    await asyncio.wait_for(stream.open(), WAIT)
    await emit_overlay(backend, overlay_spec("first", f"{backend.base_url}/templates/quiz.html?id=first"))
    first = (await next_event(stream, "overlay.show"))["overlayId"]
    await next_event(stream, "overlay.reveal", first)
    await eventually(lambda: _frames_with(remote, "id=first"), "the first overlay's frame")

    await emit_overlay(backend, overlay_spec("second", f"{backend.base_url}/templates/quiz.html?id=second",
                                             location=0))
    hidden = await next_event(stream, "overlay.hide", first)
    assert hidden["reason"] == "replaced_by_new_overlay"
    second = (await next_event(stream, "overlay.show"))["overlayId"]
    await next_event(stream, "overlay.reveal", second)

    async def only_second():
        state = await remote.state()
        urls = await remote.frame_urls()
        ids = [overlay["overlayId"] for overlay in state["overlays"]]
        return ids == [second] and not any("id=first" in url for url in urls) \
            and any("id=second" in url for url in urls)
    await eventually(only_second, "only the second overlay's frame on the page")


async def _screenshot(player, overlay_id):
    return player.screenshot(overlay_id, "reveal")


async def _frames_with(remote, url_part):
    return any(url_part in url for url in await remote.frame_urls())


async def test_the_player_follows_a_daemon_restart(backend, daemon, viewer, player, remote):
    stream = viewer.events(types=["overlay."])
    await asyncio.wait_for(stream.open(), WAIT)
    await emit_overlay(backend, overlay_spec("before", f"{backend.base_url}/templates/quiz.html?id=before"))
    before = (await next_event(stream, "overlay.show"))["overlayId"]
    await next_event(stream, "overlay.reveal", before)
    await viewer.close()

    assert await asyncio.to_thread(daemon.restart) == 0
    # A new boot has no overlay: the player reconnects and redraws from the snapshot.
    await eventually(lambda: _no_overlays(remote), "the old overlay gone after the restart")
    assert player.log().count("connected to interactived") == 2

    client = await interactived_client.connect(daemon.socket_path)
    try:
        await client.call("session.login", {"token": "token-alice", "userId": "alice", "displayName": "Alice"})
        await client.call("room.join", {"mediaId": "m1", "mode": "live"})
        again = client.events(types=["overlay."])
        await asyncio.wait_for(again.open(), WAIT)
        await emit_overlay(backend, overlay_spec("after", f"{backend.base_url}/templates/quiz.html?id=after"))
        after = (await next_event(again, "overlay.show"))["overlayId"]
        await next_event(again, "overlay.reveal", after)
        await eventually(lambda: _revealed(remote, after), "the new boot's overlay revealed")
    finally:
        await client.close()


async def _no_overlays(remote):
    return (await remote.state())["overlays"] == []


async def _revealed(remote, overlay_id):
    return [o["overlayId"] for o in (await remote.state())["overlays"] if o["revealed"]] == [overlay_id]
