"""Dialogs and the Back key. (A scenario of both players: see player_fixtures.py.)"""

from __future__ import annotations

import asyncio

import pytest
from player_support import emit_overlay, eventually, next_event, overlay_spec

pytestmark = pytest.mark.asyncio
WAIT = 20.0


async def reveal_quiz(backend, stream, remote, timeline, **extra):
    """Emits a quiz, waits until it is revealed with the remote's focus on its first choice."""
    await emit_overlay(backend, overlay_spec(timeline, f"{backend.base_url}/templates/quiz.html?id={timeline}", **extra))
    overlay_id = (await next_event(stream, "overlay.show"))["overlayId"]
    await next_event(stream, "overlay.reveal", overlay_id)
    await eventually(lambda: remote.focused_in_frame(f"id={timeline}"), "a focused choice")
    return overlay_id


async def test_login_dialog_then_back_dismisses_the_overlay(backend, viewer, player, remote):
    await asyncio.wait_for(viewer.call("session.logout"), WAIT)

    async def rejoined():
        status = await viewer.call("daemon.status")
        return status["room"]["state"] == "joined" and status["connection"]["state"] == "connected"
    await eventually(rejoined, "the room joined again as an anonymous viewer")
    stream = viewer.events(types=["overlay.", "login.", "answer."])
    await asyncio.wait_for(stream.open(), WAIT)
    overlay_id = await reveal_quiz(backend, stream, remote, "tl-login")

    await remote.press("Enter")
    assert (await next_event(stream, "login.required", overlay_id))["reason"] == "answer"
    await eventually(lambda: _state_is(remote, "dialog", "Log in to answer"), "the login dialog")
    await remote.press("Escape")  # closes the dialog; the focus goes back into the overlay
    await eventually(lambda: _state_is(remote, "focus", f"frame:{overlay_id}"), "the focus back in the overlay")
    assert (await remote.state())["dialog"] is None

    await remote.press("Escape")  # out of the overlay, onto its wrapper
    await eventually(lambda: _state_is(remote, "focus", f"overlay:{overlay_id}"), "the overlay selected")
    await remote.press("Escape")  # Back on a selected overlay dismisses it
    assert (await next_event(stream, "overlay.hide", overlay_id))["reason"] == "dismissed"
    await eventually(lambda: _state_is(remote, "overlays", []), "the overlay removed")
    assert (await asyncio.to_thread(backend.admin_sync, "actions"))["items"] == []


async def test_fanclub_dialog_closed_with_enter(backend, viewer, player, remote):
    stream = viewer.events(types=["overlay.", "fanclub.", "answer."])
    await asyncio.wait_for(stream.open(), WAIT)
    overlay_id = await reveal_quiz(backend, stream, remote, "tl-fan", requireFanclub=True)
    await remote.press("Enter")
    assert (await next_event(stream, "fanclub.required", overlay_id))["mediaId"] == "m1"
    assert (await next_event(stream, "answer.result", overlay_id))["reason"] == "fanclub_required"
    await eventually(lambda: _state_is(remote, "dialog", "Fan club members only"), "the fan-club dialog")
    await remote.press("Enter")  # OK
    await eventually(lambda: _state_is(remote, "dialog", None), "the dialog closed")


async def _state_is(remote, key, value):
    return (await remote.state())[key] == value
