"""Answering through the player: the template's posts reach the daemon through the
IOS object (the Chromium player's shim, WPE's own handler), and real key events (the remote) answer it. (A scenario of both players: see player_fixtures.py.)"""

from __future__ import annotations

import asyncio

import pytest
from player_support import emit_overlay, eventually, next_event, overlay_spec

pytestmark = pytest.mark.asyncio
WAIT = 20.0


async def test_quiz_answered_with_remote_keys_reaches_the_backend(backend, viewer, player, remote):
    stream = viewer.events(types=["overlay.", "answer."])
    await asyncio.wait_for(stream.open(), WAIT)
    url = f"{backend.base_url}/templates/quiz.html?id=tl-quiz&opts=Red|Blue|Draw"
    await emit_overlay(backend, overlay_spec("tl-quiz", url))
    overlay_id = (await next_event(stream, "overlay.show"))["overlayId"]
    # Only the template's INTERACTIVE_SHOW_ANALYTICS, posted through the injected IOS object,
    # makes the daemon reveal it.
    await next_event(stream, "overlay.reveal", overlay_id)

    async def revealed_with_focus():
        state = await remote.state()
        return [o for o in state["overlays"] if o["overlayId"] == overlay_id and o["revealed"]] \
            and state["focus"] == f"frame:{overlay_id}"
    await eventually(revealed_with_focus, "the quiz revealed with the remote's focus in it")
    first = await eventually(lambda: remote.focused_in_frame("id=tl-quiz"), "a focused choice")
    assert first == "A. Red"  # the first control that is not the close button

    await remote.press("ArrowDown")
    assert await remote.focused_in_frame("id=tl-quiz") == "B. Blue"
    await remote.press("Enter")
    result = await next_event(stream, "answer.result", overlay_id)
    assert result["status"] == "success", result
    actions = (await asyncio.to_thread(backend.admin_sync, "actions"))["items"]
    assert [a["body"]["answer"] for a in actions] == [{"answer": {"choice": "B"}}]
    assert actions[0]["userId"] == "alice"
    assert actions[0]["body"]["timelineId"] == "tl-quiz"


async def test_bet_confirmation_dialog_answered_with_the_remote(backend, viewer, player, remote):
    stream = viewer.events(types=["overlay.", "answer."])
    await asyncio.wait_for(stream.open(), WAIT)
    url = f"{backend.base_url}/templates/quiz.html?id=tl-bet"
    await emit_overlay(backend, overlay_spec("tl-bet", url, requireBet=True, betAmount=50))
    overlay_id = (await next_event(stream, "overlay.show"))["overlayId"]
    await next_event(stream, "overlay.reveal", overlay_id)
    await eventually(lambda: _focus_is(remote, overlay_id), "the quiz has the focus")
    assert await eventually(lambda: remote.focused_in_frame("id=tl-bet"), "a focused choice") == "A. Team Red"
    await remote.press("Enter")
    confirm = await next_event(stream, "answer.confirm", overlay_id)
    assert confirm["amount"] == 50
    await eventually(lambda: _dialog_is(remote, "Confirm your answer"), "the bet dialog")
    assert (await remote.state())["focus"] == "No"  # a bet spends points: "No" has the focus first
    await remote.press("ArrowLeft")
    assert (await remote.state())["focus"] == "Yes"
    await remote.press("Enter")
    result = await next_event(stream, "answer.result", overlay_id)
    assert result["status"] == "success", result
    assert (await remote.state())["dialog"] is None
    actions = (await asyncio.to_thread(backend.admin_sync, "actions"))["items"]
    assert [a["body"]["answer"] for a in actions] == [{"answer": {"choice": "A"}}]


async def test_results_posted_into_the_frame_and_controls_follow(backend, viewer, player, remote):
    stream = viewer.events(types=["overlay.", "player."])
    await asyncio.wait_for(stream.open(), WAIT)
    assert (await remote.state())["controls"] is True
    url = f"{backend.base_url}/templates/quiz.html?id=tl-res"
    await emit_overlay(backend, overlay_spec("tl-res", url))
    overlay_id = (await next_event(stream, "overlay.show"))["overlayId"]
    await next_event(stream, "overlay.reveal", overlay_id)
    assert (await next_event(stream, "player.controls"))["visible"] is False
    await eventually(lambda: _controls_are(remote, False), "the controls hidden")
    assert player.screenshot(overlay_id, "reveal") is not None

    await asyncio.to_thread(backend.admin_sync, "emit", {
        "event": "update-result", "room": "m1",
        "payload": {"timelineId": "tl-res", "data": {"correct": "B", "text": "Blue it was"}}})
    post = await next_event(stream, "overlay.post", overlay_id)
    assert post["message"]["key"] == "UPDATE_DATA_INTERACTIVE"
    shot = await eventually(lambda: _screenshot(player, overlay_id, "post-UPDATE_DATA_INTERACTIVE"),
                            "the screenshot after the post")
    assert shot.stat().st_size > 10_000

    await asyncio.to_thread(backend.admin_sync, "emit", {
        "event": "recall-overlay", "room": "m1", "payload": {"timelineId": "tl-res"}})
    assert (await next_event(stream, "overlay.hide", overlay_id))["reason"] == "recalled"
    await eventually(lambda: _controls_are(remote, True), "the controls shown again")
    assert (await remote.state())["overlays"] == []


async def _focus_is(remote, overlay_id):
    return (await remote.state())["focus"] == f"frame:{overlay_id}"


async def _dialog_is(remote, title):
    return (await remote.state())["dialog"] == title


async def _controls_are(remote, visible):
    return (await remote.state())["controls"] is visible


async def _screenshot(player, overlay_id, what):
    return player.screenshot(overlay_id, what)
