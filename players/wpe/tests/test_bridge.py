"""The engine's own message handlers: IOS posts forwarded exactly, window.postMessage delivered
with run-js, the TV page's tv handler, and the host's scripts invisible to pages."""

from __future__ import annotations

import json

import pytest

from wpehost import SPATIAL_SCRIPT

pytestmark = pytest.mark.asyncio

READY = {"type": "ready", "text": 'Grüße "quoted" \\ back\\slash ✓'}


async def test_a_post_to_ios_arrives_exactly_as_the_page_posted_it(host, pages):
    mark = host.mark()
    await host.create_view("o1", url=pages.url("bridge.html"))
    first = await host.wait_event("ios-message", since=mark, viewId="o1")
    assert first["body"] == json.dumps(READY, ensure_ascii=False, separators=(",", ":"))
    second = await host.wait_event(lambda e: e["event"] == "ios-message" and e is not first, since=mark)
    assert json.loads(second["body"]) == {"type": "object", "n": 1}
    finished = await host.wait_event("load-finished", since=mark, viewId="o1")
    assert finished["status"] == 200


async def test_the_ios_handler_is_the_engines_own_and_no_script_of_ours_is_in_the_page(host, pages):
    mark = host.mark()
    # The view gets a user script of ours too (spatial.js, in the host's isolated world).
    await host.create_view("o1", url=pages.url("bridge.html"), scripts=[{"file": str(SPATIAL_SCRIPT)}])
    await host.wait_event("load-finished", since=mark, viewId="o1")
    source = await host.run_js("o1", "window.webkit.messageHandlers.IOS.postMessage.toString()")
    assert source.replace(" ", "").replace("\n", "") == "functionpostMessage(){[nativecode]}"
    # A WebKit UserMessageHandler object, not a plain object a script could have made.
    assert await host.run_js("o1", "Object.prototype.toString.call(window.webkit.messageHandlers.IOS)") \
        == "[object UserMessageHandler]"
    assert await host.run_js("o1", "Object.getOwnPropertyNames(window.webkit.messageHandlers.IOS)") == []
    # The page's world has neither the host's handlers nor its scripts' globals...
    assert await host.run_js("o1", "typeof window.webkit.messageHandlers.host") == "undefined"
    assert await host.run_js("o1", "typeof window.webkit.messageHandlers.hostKeys") == "undefined"
    assert await host.run_js("o1", "typeof InteractivedSpatial") == "undefined"
    # ...which live in the isolated world, where the page's handler is not.
    assert await host.run_js("o1", "typeof InteractivedSpatial", world="host") == "object"
    assert await host.run_js("o1", "typeof window.webkit.messageHandlers.IOS", world="host") == "undefined"


async def test_run_js_window_post_message_reaches_the_page(host, pages):
    mark = host.mark()
    await host.create_view("o1", url=pages.url("bridge.html"))
    await host.wait_event("load-finished", since=mark, viewId="o1")
    posted = host.mark()
    message = json.dumps({"type": "result", "answer": 42})
    await host.run_js("o1", f"window.postMessage({json.dumps(message)}, '*')")
    echo = await host.wait_event("ios-message", since=posted, viewId="o1")
    assert json.loads(echo["body"]) == {"type": "echo", "data": message}
    # An async script runs in the page's world too, and its value is what it returns after awaiting.
    assert await host.run_js("o1", "await new Promise(r => setTimeout(r, 10)); return typeof window.webkit",
                             is_async=True) == "object"


async def test_the_tv_view_reports_through_its_own_handler(host, pages):
    mark = host.mark()
    await host.create_view("tv", kind="tv", url=pages.url("tv.html"), visible=True)
    assert (await host.wait_event("tv-message", since=mark, viewId="tv"))["body"] == "tv up"
    called = host.mark()
    assert await host.run_js("tv", "window.tv.ping(41)") == 42
    assert (await host.wait_event("tv-message", since=called, viewId="tv"))["body"] == "pong 41"
    # The TV page has no IOS handler (that is the overlays'), overlays no tv handler.
    assert await host.run_js("tv", "typeof window.webkit.messageHandlers.IOS") == "undefined"
    await host.create_view("o1", url=pages.url("bridge.html"))
    await host.wait_event("load-finished", since=mark, viewId="o1")
    assert await host.run_js("o1", "typeof window.webkit.messageHandlers.tv") == "undefined"
