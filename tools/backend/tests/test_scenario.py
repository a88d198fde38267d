"""Scenario file: timed room emits with placeholders, restarts, loops, VOD and users; demo.json."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
from support import REPO_ROOT, Admin, BackendProcess, RecordingClient

pytestmark = pytest.mark.asyncio

SCENARIO = {
    "rooms": {
        "live-1": [
            {"at": 0.4, "event": "update-result",
             "payload": {"timelineId": "s-{cycle}", "data": {"url": "{base}/x"}}},
            {"at": 0.1, "event": "overlay", "shape": "wrapped", "trackingId": "auto",
             "overlay": {"timelineId": "s-{cycle}", "typeTimeline": 1,
                         "url": "{base}/templates/quiz.html?id=s-{cycle}",
                         "position": {"alignment": 4, "width": 40, "height": 30}}},
        ],
        "loop-room": {"loopAfter": 0.3, "events": [
            {"at": 0, "event": "recall-overlay", "payload": {"timelineId": "x-{cycle}"}}]},
    },
    "vod": {"v1": {"timelines": [{"timelineId": "v", "time": "5", "showStatus": "ACTIVE",
                                  "url": "{base}/templates/quiz.html?id=v"}]}},
    "users": {"token-zed": {"userId": "zed", "vip": True, "bet": False}},
}


@pytest.fixture(scope="module")
def scenario_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackendProcess]:
    tmp = tmp_path_factory.mktemp("scenario")
    path = tmp / "scenario.json"
    path.write_text(json.dumps(SCENARIO))
    process = BackendProcess(tmp, ["--scenario", str(path)])
    yield process
    assert process.stop() == 0, process.stderr()


@pytest_asyncio.fixture
async def scenario_admin(scenario_backend: BackendProcess) -> AsyncIterator[Admin]:
    async with aiohttp.ClientSession() as session:
        yield Admin(scenario_backend.base_url, session)


async def test_room_timeline_runs_on_join_with_placeholders(
    scenario_backend: BackendProcess, scenario_admin: Admin
) -> None:
    base = scenario_backend.base_url
    client = RecordingClient(base)
    try:
        await client.connect()
        await client.join("live-1")
        overlay = await client.next_event("overlay", timeout=5)
        result = await client.next_event("update-result", timeout=5)
        assert [event for event, _ in client.received] == ["overlay", "update-result"]
        assert overlay["data"]["url"] == f"{base}/templates/quiz.html?id=s-0"
        assert overlay["_trackingId"].startswith("trk-")
        assert result == {"timelineId": "s-0", "data": {"url": f"{base}/x"}}
        emits = await scenario_admin.items("emits", source="scenario", room="live-1")
        assert emits[1]["time"] - emits[0]["time"] >= 250  # 0.1 s then 0.4 s after the join
        # The room empties, so the next join starts the timeline again, as run 1.
        await client.sio.emit("leave-room", {"mediaId": "live-1", "userId": "u1"})
        await scenario_admin.poll("rooms", lambda r: "live-1" not in r["rooms"])
        await client.join("live-1")
        again = await client.next_event("overlay", timeout=5)
        assert again["data"]["timelineId"] == "s-1"
        assert again["_trackingId"] != overlay["_trackingId"]
    finally:
        await client.close()


async def test_loop_after_restarts_while_occupied(
    scenario_backend: BackendProcess, scenario_admin: Admin
) -> None:
    client = RecordingClient(scenario_backend.base_url)
    try:
        await client.connect()
        await client.join("loop-room")
        ids = [(await client.next_event("recall-overlay", timeout=5))["timelineId"]
               for _ in range(3)]
        assert ids == ["x-0", "x-1", "x-2"]
        state = await scenario_admin.get("state")
        assert state["liveRooms"]["loop-room"]["running"] is True
    finally:
        await client.close()
    await scenario_admin.poll("state", lambda s: not s["liveRooms"]["loop-room"]["running"])


async def test_vod_and_users_from_the_file(scenario_backend: BackendProcess) -> None:
    base = scenario_backend.base_url
    async with aiohttp.ClientSession(headers={"X-TENANT-ID": "t"}) as http:
        async with http.get(f"{base}/api/ctc/scenario/v2/vod/v1/linuxstb") as reply:
            body = await reply.json()
        assert body["timelines"][0]["url"] == f"{base}/templates/quiz.html?id=v"
        async with http.get(f"{base}/api/public/vip-status?mediaId=m",
                            headers={"Authorization": "Bearer token-zed"}) as reply:
            assert await reply.json() == {"vip": True, "bet": False}
    client = RecordingClient(base)
    try:
        await client.connect(auth={"token": "token-alice", "userId": "alice"})  # built-ins stay
    finally:
        await client.close()


async def test_demo_scenario(tmp_path: Path) -> None:
    process = BackendProcess(tmp_path, ["--scenario",
                                        str(REPO_ROOT / "tools/backend/scenarios/demo.json")])
    try:
        async with aiohttp.ClientSession() as http:
            admin = Admin(process.base_url, http)
            state = await admin.get("state")
            assert state["liveRooms"]["demo-live"]["loopAfter"] == 60
            assert state["vodMedia"] == ["demo-vod"]
            url = f"{process.base_url}/api/ctc/scenario/v2/vod/demo-vod/linuxstb"
            async with http.get(url, headers={"X-TENANT-ID": "vtvlive"}) as reply:
                timelines = (await reply.json())["timelines"]
            times = {t["time"]: t["showStatus"] for t in timelines}
            assert times == {"5": "ACTIVE", "00:30": "ACTIVE", "01:10": "ACTIVE",
                             "00:01:45": "ACTIVE", "00:50": "INACTIVE", "1:xx": "ACTIVE"}
            client = RecordingClient(process.base_url)
            try:
                await client.connect(token="token-demo")
                await client.join("demo-live")
                first = await client.next_event("overlay", timeout=10)
                assert first["_trackingId"] and first["data"]["typeTimeline"] == 1
                async with http.get(first["data"]["url"]) as reply:
                    assert reply.status == 200
                    assert "INTERACTIVE_SHOW_ANALYTICS" in await reply.text()
            finally:
                await client.close()
    finally:
        assert process.stop() == 0, process.stderr()
