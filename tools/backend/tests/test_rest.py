"""REST API, REST faults, leaderboard, templates and the admin data endpoints."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import pytest
from support import Admin, BackendProcess

pytestmark = pytest.mark.asyncio

ACTION = {"mediaId": "m1", "timelineId": "tl1", "os": "linuxstb", "socketId": "s1",
          "userId": "alice", "mode": "live", "answer": {"choice": "A"}}


def headers(token: str | None = "token-alice", tenant: str | None = "vtvlive") -> dict:
    result = {}
    if tenant is not None:
        result["X-TENANT-ID"] = tenant
    if token is not None:
        result["Authorization"] = f"Bearer {token}"
    return result


async def call(http: aiohttp.ClientSession, backend: BackendProcess, method: str, path: str,
               **kwargs) -> tuple[int, str, str]:
    """(status, content type, body text)."""
    async with http.request(method, backend.base_url + path, **kwargs) as reply:
        return reply.status, reply.content_type, await reply.text()


async def test_tenant_header_is_required(backend, http, admin: Admin) -> None:
    async with http.get(f"{backend.base_url}/api/public/vip-status?mediaId=m1",
                        headers=headers(tenant=None)) as reply:
        assert reply.status == 400
        assert (await reply.json())["code"] == "MISSING_TENANT"
    [entry] = await admin.items("rest-log")
    assert entry["tenant"] is None and entry["bearer"] is True and entry["status"] == 400


@pytest.mark.parametrize(
    "method,path",
    [("GET", "/api/public/vip-status?mediaId=m1"), ("GET", "/api/interactive-status/m1"),
     ("POST", "/api/actions")],
)
async def test_viewer_calls_need_a_known_token(backend, http, method: str, path: str) -> None:
    for token in (None, "token-unknown"):
        async with http.request(method, backend.base_url + path, headers=headers(token),
                                json=ACTION) as reply:
            assert reply.status == 401
            assert (await reply.json())["success"] is False
    async with http.get(backend.base_url + "/api/public/vip-status?mediaId=m1",
                        headers={**headers(None), "Authorization": "Token x"}) as reply:
        assert reply.status == 401


@pytest.mark.parametrize(
    "token,expected",
    [("token-alice", {"vip": True, "bet": True}), ("token-bob", {"vip": False, "bet": False}),
     ("token-carol", {"vip": True, "bet": False}), ("token-dave", {"vip": False, "bet": True})],
)
async def test_vip_status_per_user(backend, http, token: str, expected: dict) -> None:
    async with http.get(f"{backend.base_url}/api/public/vip-status",
                        params={"mediaId": "m1"}, headers=headers(token)) as reply:
        assert reply.status == 200 and await reply.json() == expected
    async with http.get(f"{backend.base_url}/api/public/vip-status",
                        headers=headers(token)) as reply:
        assert reply.status == 400


async def test_users_can_be_added_and_replaced(backend, http, admin: Admin) -> None:
    users = {"token-erin": {"userId": "erin", "vip": True, "bet": True}}
    reply = await admin.post("users", {"users": users})
    assert reply["users"]["token-erin"] == {"userId": "erin", "displayName": "Erin",
                                            "vip": True, "bet": True}
    assert "token-alice" in reply["users"]
    async with http.get(f"{backend.base_url}/api/public/vip-status?mediaId=m",
                        headers=headers("token-erin")) as answer:
        assert await answer.json() == {"vip": True, "bet": True}
    reply = await admin.post("users", {"users": users, "replace": True})
    assert list(reply["users"]) == ["token-erin"]
    await admin.post("users", {"users": {"t": {"vip": True}}}, expect=400)


async def test_successful_action_is_recorded_and_counts_as_answered(
    backend, http, admin: Admin
) -> None:
    async with http.post(f"{backend.base_url}/api/actions", json=ACTION,
                         headers=headers()) as reply:
        assert reply.status == 200
        assert await reply.json() == {"success": True, "code": None, "message": "ok",
                                      "data": {"number": 7}}
    [action] = await admin.items("actions")
    assert action["body"] == ACTION and action["problems"] == [] and action["userId"] == "alice"
    assert action["reply"] == "success" and action["tenant"] == "vtvlive"
    assert action["authorization"] == "Bearer token-alice"
    assert action["contentType"] == "application/json"
    async with http.get(f"{backend.base_url}/api/interactive-status/m1",
                        headers=headers()) as reply:
        assert await reply.json() == {"answered": ["tl1"]}
    async with http.get(f"{backend.base_url}/api/interactive-status/m1",
                        headers=headers("token-bob")) as reply:
        assert await reply.json() == {"answered": []}
    assert (await admin.get("answered"))["answered"] == {"alice": {"m1": ["tl1"]}}


async def test_action_problems_are_listed(backend, http, admin: Admin) -> None:
    body = {"mediaId": "m1", "timelineId": "tl2", "userId": "bob", "mode": "live",
            "socketId": None, "answer": "A"}
    async with http.post(f"{backend.base_url}/api/actions", json=body,
                         headers=headers()) as reply:
        assert reply.status == 200
    [action] = await admin.items("actions")
    assert set(action["problems"]) == {"missing os", "answer is not an object",
                                       "socketId is null in live mode",
                                       "userId differs from the token's user"}
    async with http.post(f"{backend.base_url}/api/actions", data="not json",
                         headers=headers()) as reply:
        assert reply.status == 400 and (await reply.json())["code"] == "EX400"
    [_, bad] = await admin.items("actions")
    assert "Content-Type is not application/json" in bad["problems"]


async def test_answered_can_be_set_by_admin(backend, http, admin: Admin) -> None:
    await admin.post("answered", {"userId": "bob", "mediaId": "m1", "timelineIds": ["a", "b"]})
    reply = await admin.post("answered", {"userId": "bob", "mediaId": "m1",
                                          "timelineIds": ["c"]})
    assert reply["answered"] == ["a", "b", "c"]
    async with http.get(f"{backend.base_url}/api/interactive-status/m1",
                        headers=headers("token-bob")) as answer:
        assert await answer.json() == {"answered": ["a", "b", "c"]}
    reply = await admin.post("answered", {"userId": "bob", "mediaId": "m1",
                                          "timelineIds": [], "replace": True})
    assert reply["answered"] == []


SUCCESS_FALSE = {"success": False, "code": None, "message": "not accepted"}


@pytest.mark.parametrize(
    "mode,status,json_body",
    [
        ("EX400", 200, {"success": False, "code": "EX400", "message": "refused: EX400"}),
        ("TL404", 200, {"success": False, "code": "TL404", "message": "refused: TL404"}),
        ("PM402", 200, {"success": False, "code": "PM402", "message": "refused: PM402"}),
        ("XY999", 200, {"success": False, "code": "XY999", "message": "refused: XY999"}),
        (False, 200, SUCCESS_FALSE),
        ("false", 200, SUCCESS_FALSE),
        ("malformed", 200, None),
        ("http500", 500, None),
        ("http502", 502, None),
        ("unauthorized", 401, {"success": False, "code": "UNAUTHORIZED",
                               "message": "token expired"}),
        ("forbidden", 403, {"success": False, "code": "FORBIDDEN", "message": "not allowed"}),
    ],
)
async def test_actions_reply_modes(backend, http, admin: Admin, mode, status, json_body) -> None:
    await admin.post("fault", {"actionsReply": mode})
    code, content_type, text = await call(http, backend, "POST", "/api/actions", json=ACTION,
                                          headers=headers())
    assert code == status
    if json_body is None:
        assert content_type == "text/html" and text.lstrip().startswith("<")
    else:
        assert content_type == "application/json"
        assert json.loads(text) == json_body
    async with http.get(f"{backend.base_url}/api/interactive-status/m1",
                        headers=headers()) as reply:
        assert await reply.json() == {"answered": []}  # only a success counts
    [action] = await admin.items("actions")
    assert action["status"] == status


async def test_lucky_number_is_configurable(backend, http, admin: Admin) -> None:
    await admin.post("fault", {"luckyNumber": 42})
    async with http.post(f"{backend.base_url}/api/actions", json=ACTION,
                         headers=headers()) as reply:
        assert (await reply.json())["data"] == {"number": 42}


async def test_rest_delay(backend, http, admin: Admin) -> None:
    await admin.post("fault", {"restDelayMs": 400})
    started = time.monotonic()
    async with http.get(f"{backend.base_url}/api/public/vip-status?mediaId=m1",
                        headers=headers()) as reply:
        assert reply.status == 200
    assert time.monotonic() - started >= 0.4
    started = time.monotonic()
    async with http.get(f"{backend.base_url}/_admin/state") as reply:
        assert reply.status == 200  # the admin API is never delayed
    assert time.monotonic() - started < 0.4


async def test_rest_in_flight_counts_the_waiting_requests(backend, http, admin: Admin) -> None:
    await admin.post("fault", {"restDelayMs": 1500})
    url = f"{backend.base_url}/api/public/vip-status?mediaId=m1"

    async def status() -> int:
        async with http.get(url, headers=headers()) as reply:
            return reply.status

    waiting = asyncio.gather(*(status() for _ in range(3)))
    async with asyncio.timeout(1):
        while (await admin.get("state"))["restInFlight"] != 3:
            await asyncio.sleep(0.02)
    assert await waiting == [200, 200, 200]
    assert (await admin.get("state"))["restInFlight"] == 0
    assert (await admin.get("state"))["restArrived"] == 3
    await admin.post("reset")
    assert (await admin.get("state"))["restArrived"] == 0


@pytest.mark.parametrize("fail,status", [(503, 503), (401, 401), ("malformed", 200)])
async def test_rest_fail(backend, http, admin: Admin, fail, status: int) -> None:
    await admin.post("fault", {"restFail": fail})
    for method, path in (("GET", "/api/public/vip-status?mediaId=m1"),
                         ("GET", "/api/ctc/scenario/v2/vod/demo/linuxstb"),
                         ("POST", "/api/actions")):
        code, content_type, text = await call(http, backend, method, path, json=ACTION,
                                              headers=headers())
        assert (code, content_type) == (status, "text/html") and "<html>" in text
    assert await admin.items("actions") == []  # failed before reaching the handler
    assert [e["status"] for e in await admin.items("rest-log")] == [status] * 3
    await admin.post("fault", {"restFail": None})
    code, _, _ = await call(http, backend, "GET", "/api/public/vip-status?mediaId=m1",
                            headers=headers())
    assert code == 200


async def test_close_without_reply_handles_then_closes(backend, http, admin: Admin) -> None:
    await admin.post("fault", {"closeWithoutReply": True})
    with pytest.raises(aiohttp.ClientError):
        await call(http, backend, "POST", "/api/actions", json=ACTION, headers=headers())
    assert len(await admin.items("actions")) == 1  # handled: the answer was taken
    assert [e["status"] for e in await admin.items("rest-log")] == [0]
    await admin.post("fault", {"closeWithoutReply": None})
    code, _, _ = await call(http, backend, "GET", "/api/public/vip-status?mediaId=m1", headers=headers())
    assert code == 200


VOD = {"timelines": [{"timelineId": "v1", "time": "01:30", "showStatus": "ACTIVE",
                      "typeTimeline": 1, "url": "{base}/templates/quiz.html?id=v1",
                      "position": {"alignment": 4, "width": 40, "height": 30}}]}


async def test_vod_scenario_found_and_not_found(backend, http, admin: Admin) -> None:
    await admin.put("scenario/m-vod", VOD)
    url = f"{backend.base_url}/api/ctc/scenario/v2/vod/m-vod/linuxstb"
    async with http.get(url, headers=headers(None)) as reply:  # no viewer needed
        assert reply.status == 200
        body = await reply.json()
    assert body["timelines"][0]["url"] == f"{backend.base_url}/templates/quiz.html?id=v1"
    assert body["timelines"][0]["time"] == "01:30"
    stored = await admin.get("scenario/m-vod")
    assert stored["scenario"] == VOD  # kept with its placeholder
    async with http.get(f"{backend.base_url}/api/ctc/scenario/v2/vod/other/linuxstb",
                        headers=headers()) as reply:
        assert reply.status == 404
    await admin.put("scenario/m-odd", ["not", "the", "expected", "shape"])
    async with http.get(f"{backend.base_url}/api/ctc/scenario/v2/vod/m-odd/x",
                        headers=headers()) as reply:
        assert await reply.json() == ["not", "the", "expected", "shape"]
    async with http.delete(f"{backend.base_url}/_admin/scenario/m-vod") as reply:
        assert (await reply.json())["removed"] is True
    async with http.get(url, headers=headers()) as reply:
        assert reply.status == 404


async def test_leaderboard_page(backend, http, admin: Admin) -> None:
    await admin.post("answered", {"userId": "bob", "mediaId": "m1", "timelineIds": ["a", "b"]})
    await admin.post("answered", {"userId": "alice", "mediaId": "m1", "timelineIds": ["a"]})
    status, content_type, text = await call(http, backend, "GET",
                                            "/leaderboard?mediaId=m1&tenant=onlivev2")
    assert (status, content_type) == (200, "text/html")
    assert "onlivev2" in text and text.index("Bob") < text.index("Alice")
    status, _, _ = await call(http, backend, "GET", "/leaderboard")
    assert status == 400


@pytest.mark.parametrize(
    "name,keys",
    [
        ("quiz.html", ["INTERACTIVE_SHOW_ANALYTICS", "INTERACTIVE_ACTION_REPORT", "CLICK_ADS",
                       "INTERACTIVE_HIDE_ANALYTICS", "UPDATE_DATA_INTERACTIVE", "UPDATE_CONFIRM"]),
        ("predict.html", ["INTERACTIVE_OPEN_ANALYTICS", "INTERACTIVE_CLOSE_ANALYTICS",
                          "UPDATE_COUTER", "UPDATE_CONFIRM"]),
        ("lucky.html", ["INTERACTIVE_OPEN_ANALYTICS", "INTERACTIVE_CLOSE_ANALYTICS",
                        "UPDATE_NUMBER_LUCKY", "UPDATE_CONFIRM"]),
        ("bridge.js", ["messageHandlers", "IOS", "interactiveBridge", "window.parent"]),
    ],
)
async def test_templates_are_served(backend, http, admin: Admin, name: str, keys) -> None:
    status, content_type, text = await call(http, backend, "GET", f"/templates/{name}")
    assert status == 200 and content_type in ("text/html", "text/javascript",
                                              "application/javascript")
    for key in keys:
        assert key in text
    [entry] = await admin.items("rest-log", path=f"/templates/{name}")
    assert entry["status"] == 200
    status, _, _ = await call(http, backend, "GET", "/templates/nope.html")
    assert status == 404


async def test_admin_logs_filter_by_since(backend, http, admin: Admin) -> None:
    for _ in range(3):
        await call(http, backend, "GET", "/api/public/vip-status?mediaId=m1", headers=headers())
    reply = await admin.get("rest-log")
    first = reply["items"][0]["seq"]
    assert [i["seq"] for i in (await admin.get("rest-log", since=first))["items"]] == [
        first + 1, first + 2]
    assert reply["lastSeq"] == first + 2


@pytest.mark.parametrize("status", [200, 400, 402, 404, 409])
async def test_refusals_in_the_answer_shape_with_any_status(backend, http, admin: Admin, status: int) -> None:
    await admin.post("fault", {"actionsReply": "EX400", "refusalStatus": status, "vipReply": "EX402"})
    code, kind, text = await call(http, backend, "POST", "/api/actions", json=ACTION, headers=headers())
    assert (code, kind, json.loads(text)["code"], json.loads(text)["success"]) == (status, "application/json", "EX400", False)
    code, _, text = await call(http, backend, "GET", "/api/public/vip-status?mediaId=m1", headers=headers())
    assert (code, json.loads(text)["code"], json.loads(text)["success"]) == (status, "EX402", False)
    await admin.post("fault", {"actionsReply": None, "refusalStatus": None, "vipReply": None})
    code, _, text = await call(http, backend, "GET", "/api/public/vip-status?mediaId=m1", headers=headers())
    assert code == 200 and json.loads(text) == {"vip": True, "bet": True}


async def test_padding_adds_many_small_entries(backend, http, admin: Admin) -> None:
    await admin.post("fault", {"restPadBytes": 200_000})
    code, _, text = await call(http, backend, "GET", "/api/interactive-status/m1", headers=headers())
    body = json.loads(text)
    assert code == 200 and body["answered"] == [] and len(body["_pad"]) == 100_000 and 190_000 < len(text) < 210_000
    async with http.post(f"{backend.base_url}/v1/play", json={"film_id": "f1", "episode_no": 1, "union_info": "u",
                                                            "drm_kek": "k"}, headers=headers()) as reply:
        assert len((await reply.json())["_pad"]) == 100_000


@pytest.mark.parametrize("mode,start", [("continueFlood", b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100"),
                                        ("chunkedEndless", b"HTTP/1.1 200 OK\r\n"),
                                        ("closeDelimitedEndless", b"HTTP/1.1 200 OK\r\n")])
async def test_framing_faults_send_until_the_client_closes(backend, admin: Admin, mode: str, start: bytes) -> None:
    await admin.post("fault", {"restFraming": mode})
    host, port = backend.base_url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"GET /api/interactive-status/m1 HTTP/1.1\r\nHost: x\r\nX-TENANT-ID: t\r\n"
                 b"Authorization: Bearer token-alice\r\n\r\n")
    received = b""
    while len(received) < 1 << 20:
        received += await asyncio.wait_for(reader.read(65536), 10)
    writer.close()
    assert received.startswith(start)
    if mode == "chunkedEndless":
        assert b"Transfer-Encoding: chunked" in received.split(b"\r\n\r\n")[0]
    if mode == "closeDelimitedEndless":
        assert b"Content-Length" not in received.split(b"\r\n\r\n")[0]
    for _ in range(100):  # the server sees the close and logs how much it sent
        entries = await admin.items("rest-log")
        if entries:
            break
        await asyncio.sleep(0.05)
    assert entries[0]["status"] == 0 and entries[0]["sent"] >= 1 << 20
    await admin.post("fault", {"restFraming": None})
