"""--automation: WPEWebDriver (Debian's wpewebkit-driver, through Selenium) starts the host as
its browser and drives the host's views: it clicks, sends keys and reads the DOM, while the
test watches the same views through the host's control socket."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from host_support import eventually, pixel
from wpehost import HOST_BINARY, WpeHost, alive

pytestmark = [
    pytest.mark.asyncio,
    # Selenium's own WPEWebKit driver class still uses an API Selenium deprecated.
    pytest.mark.filterwarnings("ignore:setting remote_server_addr:DeprecationWarning"),
]

WEBDRIVER = Path("/usr/bin/WPEWebDriver")


@pytest.fixture
def driven(tmp_path: Path, clip: Path) -> Iterator[tuple[webdriver.Remote, Path]]:
    """A WebDriver session whose browser is wpe-host (headless), and the host's control socket."""
    socket_path = tmp_path / "control.sock"
    options = webdriver.WPEWebKitOptions()
    options.binary_location = str(HOST_BINARY)
    # WebDriver matches the name the host gives its automation sessions.
    options.set_capability("browserName", "wpe-host")
    for argument in ("--automation", "--control-socket", str(socket_path), "--video", str(clip)):
        options.add_argument(argument)
    environment = {name: value for name, value in os.environ.items() if name != "DISPLAY"}
    service = webdriver.WPEWebKitService(executable_path=str(WEBDRIVER), env=environment)
    driver = webdriver.WPEWebKit(options=options, service=service)
    try:
        yield driver, socket_path
    finally:
        if service.is_connectable():  # the test did not get to quit
            driver.quit()


async def test_webdriver_clicks_sends_keys_and_reads_the_dom_of_the_hosts_views(driven, pages, tmp_path):
    driver, socket_path = driven
    host = await WpeHost.connect(socket_path)
    assert host.ready["automation"] is True
    processes = host.processes()
    # WebDriver's own browsing context is a view of the host's, shown and focused.
    created = await host.wait_event("view-created")
    view = created["viewId"]
    mark = host.mark()
    await asyncio.to_thread(driver.get, pages.url("buttons.html"))
    await host.wait_event("load-finished", since=mark, viewId=view)
    button = await asyncio.to_thread(driver.find_element, By.ID, "b")
    mark = host.mark()
    await asyncio.to_thread(button.click)
    assert (await host.wait_event("ios-message", since=mark, viewId=view))["body"] == "clicked b"
    assert await asyncio.to_thread(driver.execute_script, "return document.activeElement.id") == "b"
    mark = host.mark()
    await asyncio.to_thread(ActionChains(driver).send_keys(Keys.ENTER).perform)
    assert (await host.wait_event("ios-message", since=mark, viewId=view))["body"] == "clicked b"
    # What WebDriver drives is what the host composites.
    await host.settle(view)
    shot = await host.screenshot(tmp_path / "driven.png")
    assert pixel(shot, 240, 30) == (255, 255, 255)  # button B (page 200..280, 10..50)
    # A view made with create-view is one of WebDriver's windows too.
    mark = host.mark()
    await host.create_view("o1", url=pages.url("bridge.html"))
    await host.wait_event("load-finished", since=mark, viewId="o1")
    handles = await asyncio.to_thread(lambda: driver.window_handles)
    assert len(handles) == 2

    def path_of(handle):
        driver.switch_to.window(handle)
        return driver.execute_script("return location.pathname")
    paths = {await asyncio.to_thread(path_of, handle): handle for handle in handles}
    assert set(paths) == {"/buttons.html", "/bridge.html"}
    await asyncio.to_thread(driver.switch_to.window, paths["/bridge.html"])
    assert await asyncio.to_thread(driver.execute_script,
                                   "return typeof window.webkit.messageHandlers.IOS.postMessage") == "function"
    # Closing a window destroys its view before WebDriver's close returns: the window is gone
    # from the session's list at once.
    mark = host.mark()
    await asyncio.to_thread(driver.close)
    assert await host.wait_event("view-destroyed", since=mark, viewId="o1")
    assert await asyncio.to_thread(lambda: driver.window_handles) == [paths["/buttons.html"]]
    # Quitting the session ends the host and everything it started.
    await asyncio.to_thread(driver.quit)
    await host.close()

    async def ended():
        return True if alive(processes) == [] else None
    await eventually(ended, f"the host's processes ended: {alive(processes)}", 10)
