"""The remote's keys and clicks: keys go to the focused view, the arrows move the focus (with the
spatial navigation players/web injects, here in the host's isolated world), Enter clicks the
focused button, keys nothing handled are reported, and a click goes to the view drawn there."""

from __future__ import annotations

import pytest

from host_support import REMOTE
from wpehost import SPATIAL_SCRIPT

pytestmark = pytest.mark.asyncio


async def buttons(host, pages, **rect):
    mark = host.mark()
    await host.create_view("o1", url=pages.url("buttons.html"), visible=True,
                           scripts=[{"file": str(SPATIAL_SCRIPT)}, {"source": REMOTE}], **rect)
    await host.wait_event("load-finished", since=mark, viewId="o1")


async def focused(host):
    return await host.run_js("o1", "document.activeElement.id || document.activeElement.tagName")


async def test_arrows_move_the_focus_and_enter_clicks_the_focused_button(host, pages):
    await buttons(host, pages)
    await host.request("focus", viewId="o1")
    assert await host.key("ArrowRight") == "o1"
    assert await focused(host) == "a"
    await host.key("ArrowRight")
    assert await focused(host) == "b"
    mark = host.mark()
    await host.key("Enter")
    assert (await host.wait_event("ios-message", since=mark, viewId="o1"))["body"] == "clicked b"
    await host.key("Left")  # XKB's name works as well as the DOM's
    await host.key("ArrowDown")
    assert await focused(host) == "c"
    mark = host.mark()
    await host.key("Return")
    assert (await host.wait_event("ios-message", since=mark, viewId="o1"))["body"] == "clicked c"


async def test_keys_nothing_handled_are_reported_and_back_arrives_as_browser_back(host, pages):
    await buttons(host, pages)
    await host.request("focus", viewId="o1")
    await host.key("ArrowDown")
    assert await focused(host) == "a"
    mark = host.mark()
    await host.key("ArrowUp")  # nothing above A
    assert (await host.wait_event("key-unhandled", since=mark, viewId="o1"))["key"] == "ArrowUp"
    mark = host.mark()
    await host.key("Back")
    assert (await host.wait_event("key-unhandled", since=mark, viewId="o1"))["key"] == "BrowserBack"
    # A handled key is not reported: the next report is Escape's, not ArrowRight's.
    mark = host.mark()
    await host.key("ArrowRight")
    await host.key("Escape")
    assert (await host.wait_event("key-unhandled", since=mark))["key"] == "Escape"


async def test_keys_go_to_the_focused_view_only(host, pages):
    await buttons(host, pages)
    mark = host.mark()
    await host.create_view("o2", url=pages.url("buttons.html"), scripts=[{"file": str(SPATIAL_SCRIPT)},
                                                                          {"source": REMOTE}])
    await host.wait_event("load-finished", since=mark, viewId="o2")
    mark = host.mark()
    assert await host.key("ArrowRight") is None  # no view has the focus
    assert (await host.wait_event("key-unhandled", since=mark))["viewId"] is None
    await host.request("focus", viewId="o2")
    await host.key("ArrowRight")
    assert await host.run_js("o2", "document.activeElement.id") == "a"
    assert await focused(host) == "BODY"


async def test_a_click_goes_to_the_view_drawn_under_it(host, pages):
    await buttons(host, pages, x=100, y=100, width=400, height=300)
    mark = host.mark()
    await host.create_view("under", url=pages.url("buttons.html"), visible=True, z=-1)
    await host.wait_event("load-finished", since=mark, viewId="under")
    await host.settle("o1")
    await host.settle("under")
    mark = host.mark()
    # Button B of o1 is at page (200..280, 10..50): screen (300..380, 110..150).
    assert await host.click(340, 130) == "o1"
    assert (await host.wait_event("ios-message", since=mark))["body"] == "clicked b"
    # Where o1 is transparent the click goes through to the view under it (its button A at 10..90, 10..50).
    mark = host.mark()
    assert await host.click(50, 30) == "under"
    event = await host.wait_event("ios-message", since=mark)
    assert event["viewId"] == "under" and event["body"] == "clicked a"
    assert await host.click(700, 700) is None
