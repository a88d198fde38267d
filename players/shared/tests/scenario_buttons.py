"""Predict buttons: drawn with their images, swapped and faded as the
daemon says, and a real click opens the prediction. (A scenario of both players: see player_fixtures.py.)"""

from __future__ import annotations

import asyncio

import pytest
from player_support import emit_overlay, eventually, next_event, overlay_spec

pytestmark = pytest.mark.asyncio
WAIT = 20.0


async def test_predict_button_images_opacity_and_click(backend, viewer, player, remote):
    stream = viewer.events(types=["overlay.", "predict."])
    await asyncio.wait_for(stream.open(), WAIT)
    idle = f"{backend.base_url}/templates/img/predict-idle.svg"
    power = f"{backend.base_url}/templates/img/predict-power.svg"
    await asyncio.to_thread(backend.admin_sync, "emit", {
        "event": "action-button-predict", "room": "m1",
        "payload": {"timelineId": "tl-p", "typeTimeline": 3, "imageIdle": idle, "imagePower": power,
                    "visible": True}})
    button = await next_event(stream, "predict.button")
    assert (button["visible"], button["image"]) == (True, "idle")
    await eventually(lambda: _button_is(remote, idle, 1), "the idle image drawn")

    url = f"{backend.base_url}/templates/predict.html?id=tl-p"
    await emit_overlay(backend, overlay_spec("tl-p", url, typeTimeline=3))
    lit = await next_event(stream, "predict.button")
    assert lit["image"] == "power"
    await eventually(lambda: _button_is(remote, power, 1), "the power image drawn")

    box = await remote.tv("buttonBox", "tl-p")
    await remote.click(box[0] + box[2] / 2, box[1] + box[3] / 2)
    show = await next_event(stream, "overlay.show")
    assert (show["kind"], show["timelineId"]) == ("predict", "tl-p")
    await next_event(stream, "overlay.reveal", show["overlayId"])
    faded = await next_event(stream, "predict.button")
    while faded["opacity"] != 0.5:  # idle again after the tap, then faded five seconds later
        faded = await next_event(stream, "predict.button")
    assert faded["image"] == "idle"
    await eventually(lambda: _button_is(remote, idle, 0.5), "the idle image faded")


async def _button_is(remote, src, opacity):
    buttons = (await remote.state())["buttons"]
    return len(buttons) == 1 and buttons[0]["src"] == src and buttons[0]["opacity"] == opacity
