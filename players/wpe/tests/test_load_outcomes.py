"""Each load ends in exactly one outcome: load-finished with the HTTP status, or load-failed with
a reason (an HTTP error, a refused connection, and the port WebKit blocks by loading about:blank
without a word)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio

OUTCOMES = ("load-finished", "load-failed")


async def outcome(host, view_id, since):
    return await host.wait_event(lambda e: e["event"] in OUTCOMES, since=since, viewId=view_id)


async def test_a_page_that_loads_is_finished_with_its_status(host, pages):
    mark = host.mark()
    await host.create_view("o1", url=pages.url("bridge.html"))
    started = await host.wait_event("load-started", since=mark, viewId="o1")
    assert started["url"] == pages.url("bridge.html")
    result = await outcome(host, "o1", mark)
    assert result["event"] == "load-finished" and result["status"] == 200


async def test_an_http_404_is_a_failure(host, pages):
    mark = host.mark()
    await host.create_view("o1", url=pages.url("missing/page.html"))
    result = await outcome(host, "o1", mark)
    assert result["event"] == "load-failed"
    assert result["status"] == 404 and result["reason"] == "HTTP 404"


async def test_a_refused_connection_is_a_failure(host, closed_port):
    mark = host.mark()
    url = f"http://127.0.0.1:{closed_port}/overlay.html"
    await host.create_view("o1", url=url)
    result = await outcome(host, "o1", mark)
    assert result["event"] == "load-failed" and result["url"] == url
    assert "refused" in result["reason"].lower()


async def test_a_port_webkit_blocks_is_a_failure_not_a_silent_blank_page(host, pages):
    # 6000 (X11) is on WebKit's list of blocked ports: it loads about:blank instead, and says nothing.
    mark = host.mark()
    await host.create_view("o1", url="http://127.0.0.1:6000/overlay.html")
    result = await outcome(host, "o1", mark)
    assert result["event"] == "load-failed"
    assert result["url"] == "http://127.0.0.1:6000/overlay.html"
    assert "about:blank" in result["reason"]
    assert (await host.request("list-views"))["views"][0]["url"] == "about:blank"


async def test_navigating_again_reports_the_new_load_only(host, pages):
    mark = host.mark()
    await host.create_view("o1", url=pages.url("bridge.html"))
    assert (await outcome(host, "o1", mark))["event"] == "load-finished"
    again = host.mark()
    await host.navigate("o1", pages.url("missing/x"))
    result = await outcome(host, "o1", again)
    assert result["event"] == "load-failed" and result["status"] == 404
    assert [e["event"] for e in host.events(again) if e["event"] in OUTCOMES] == ["load-failed"]
