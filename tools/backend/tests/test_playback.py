"""Playback tickets: POST /v1/play, its catalogue and outcomes, the ticket lifetime and date forms,
the stream check, and the playback admin and fault knobs."""

from __future__ import annotations

import re
import time
from datetime import datetime

import aiohttp
import pytest
from support import Admin, BackendProcess

from tools.backend.playback_state import iso_time, parse_film

pytestmark = pytest.mark.asyncio

DEVICE = {"union_info": "union-1", "drm_kek": "kek-1"}
HEADERS = {"X-TENANT-ID": "onlivev2", "Authorization": "Bearer token-alice"}
FRACTIONAL = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
PLAIN = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


async def play(http: aiohttp.ClientSession, backend: BackendProcess, film: str, episode: int,
               headers: dict | None = None, **body) -> tuple[int, dict]:
    """(status, reply JSON) of one POST /v1/play."""
    payload = {"film_id": film, "episode_no": episode, **DEVICE, **body}
    async with http.post(f"{backend.base_url}/v1/play", json=payload,
                         headers=HEADERS if headers is None else headers) as reply:
        return reply.status, await reply.json(content_type=None)


def seconds_left(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() - time.time()


async def test_a_ticket_and_the_next_two_episodes(backend, http) -> None:
    status, reply = await play(http, backend, "f1", 1)
    assert status == 200 and reply["ok"] is True
    current = reply["current"]
    assert current["vid"] == "f1-e1" and current["playAuthToken"].startswith("pat_")
    assert [s["lang"] for s in current["subtitles"]] == ["vi", "en"]
    assert FRACTIONAL.match(current["expiresAt"]) and 595 < seconds_left(current["expiresAt"]) <= 600
    assert [entry["episodeNo"] for entry in reply["next"]] == [2, 3]
    assert all(PLAIN.match(entry["ticket"]["expiresAt"]) for entry in reply["next"])
    tokens = {current["playAuthToken"], *(e["ticket"]["playAuthToken"] for e in reply["next"])}
    assert len(tokens) == 3


@pytest.mark.parametrize("episode,expected", [(4, [5, 6]), (5, [6]), (6, [])])
async def test_next_holds_zero_to_two_episodes(backend, http, episode: int, expected: list) -> None:
    _, reply = await play(http, backend, "f1", episode)
    assert [entry["episodeNo"] for entry in reply["next"]] == expected


@pytest.mark.parametrize("film,episode,outcome", [
    ("f-locked", 1, "locked"), ("f-unavailable", 1, "unavailable"), ("f-notready", 1, "notReady"),
    ("f-busy", 1, "busy"), ("f-broken", 1, "broken"), ("nothing", 1, "unavailable"), ("f2", 3, "notReady"),
])
async def test_refusals(backend, http, film: str, episode: int, outcome: str) -> None:
    status, reply = await play(http, backend, film, episode)
    assert status == 200 and reply == {"ok": False, "outcome": outcome}


async def test_requests_are_counted_per_episode_and_recorded(backend, http, admin: Admin) -> None:
    await play(http, backend, "f1", 1)
    await play(http, backend, "f1", 1)
    await play(http, backend, "f-locked", 2)
    await play(http, backend, "f1", 2, union_info="(null)")
    assert (await admin.get("playback"))["requests"] == {"f-locked/2": 1, "f1/1": 2, "f1/2": 1}
    [refused] = await admin.items("play-requests", episodeNo="2", filmId="f1")
    assert refused["status"] == 400 and refused["problems"] == ["union_info is '(null)'"]
    [first, *_] = await admin.items("play-requests")
    assert first["userId"] == "alice" and first["tenant"] == "onlivev2" and first["bearer"] is True
    assert first["contentType"] == "application/json" and first["outcome"] == "ok"


@pytest.mark.parametrize("value", ["(null)", "nil", "NULL", "undefined", "", "  "])
async def test_placeholder_device_values_are_refused(backend, http, value: str) -> None:
    status, reply = await play(http, backend, "f1", 1, drm_kek=value)
    assert status == 400 and reply["ok"] is False and reply["outcome"] == "broken"


async def test_a_viewer_and_a_tenant_are_required(backend, http) -> None:
    status, reply = await play(http, backend, "f1", 1, headers={"X-TENANT-ID": "t"})
    assert status == 401 and reply["outcome"] == "unauthorized"
    status, _ = await play(http, backend, "f1", 1, headers={"Authorization": "Bearer token-alice"})
    assert status == 400


async def test_lifetime_date_form_and_expiry(backend, http, admin: Admin) -> None:
    await admin.post("playback", {"ticketLifetimeSec": 30, "dateForm": "plain"})
    _, reply = await play(http, backend, "f1", 1)
    ticket = reply["current"]
    assert PLAIN.match(ticket["expiresAt"]) and 28 < seconds_left(ticket["expiresAt"]) <= 30
    stream = f"{backend.base_url}/v1/stream/{ticket['vid']}"
    async with http.get(stream, params={"token": ticket["playAuthToken"]}) as answer:
        assert answer.status == 200
    async with http.get(stream, params={"token": "pat_other"}) as answer:
        assert answer.status == 403
    state = await admin.post("playback", {"expireTickets": True})
    assert state["tickets"] == {"issued": 3, "valid": 0}
    async with http.get(stream, params={"token": ticket["playAuthToken"]}) as answer:
        assert answer.status == 403 and (await answer.json())["reason"] == "expired"
    await admin.post("playback", {"dateForm": "fractional"})
    _, reply = await play(http, backend, "f1", 1)
    assert all(FRACTIONAL.match(t["expiresAt"]) for t in [reply["current"], reply["next"][0]["ticket"]])


async def test_catalogue_changes_and_reset(backend, http, admin: Admin) -> None:
    await admin.post("playback", {"films": {"f9": {"episodes": 3, "next": 1, "subtitles": ["fr"]},
                                            "f1": {"episodes": 6, "outcome": "busy"}}})
    _, reply = await play(http, backend, "f9", 1)
    assert [e["episodeNo"] for e in reply["next"]] == [2]
    assert reply["current"]["subtitles"][0]["url"].endswith("/v1/subtitles/f9-e1/fr.vtt")
    assert (await play(http, backend, "f1", 1))[1] == {"ok": False, "outcome": "busy"}
    await admin.post("playback", {"films": {"x": {"episodes": 0}}}, expect=400)
    await admin.post("playback", {"dateForm": "roman"}, expect=400)
    await admin.post("reset")
    state = await admin.get("playback")
    assert "f9" not in state["catalogue"] and state["requests"] == {} and state["dateForm"] == "mixed"


async def test_delay_and_garbage_faults(backend, http, admin: Admin) -> None:
    await admin.post("fault", {"playDelayMs": 600})
    started = time.monotonic()
    status, _ = await play(http, backend, "f1", 1)
    assert status == 200 and time.monotonic() - started >= 0.55
    await admin.post("fault", {"playDelayMs": None, "playReply": "garbage"})
    async with http.post(f"{backend.base_url}/v1/play", json={"film_id": "f1", "episode_no": 1, **DEVICE},
                         headers=HEADERS) as reply:
        assert reply.content_type == "text/html"
    await admin.post("fault", {"playReply": "badDate"})
    assert (await play(http, backend, "f1", 1))[1]["current"]["expiresAt"] == "30/11/2026 10:00"
    await admin.post("fault", {"playReply": "noOutcome"})
    assert (await play(http, backend, "f-busy", 1))[1] == {"ok": False}
    await admin.post("fault", {"playReply": "unknownOutcome"})
    assert (await play(http, backend, "f1", 1))[1] == {"ok": False, "outcome": "exploded"}
    await admin.post("fault", {"playReply": "sometimes"}, expect=400)
    assert (await admin.get("playback"))["requests"]["f1/1"] == 4


async def test_units() -> None:
    assert iso_time(1796032800.123, fractional=True) == "2026-11-30T10:00:00.123Z"
    assert iso_time(1796032800.123, fractional=False) == "2026-11-30T10:00:00Z"
    assert parse_film("f", {"episodes": 2})["next"] == 2
    with pytest.raises(ValueError):
        parse_film("f", {"episodes": 2, "color": "red"})


async def test_next_count_knob(backend, http, admin: Admin) -> None:
    await admin.post("fault", {"playNextCount": 20_000})
    status, reply = await play(http, backend, "f1", 1)
    assert status == 200 and len(reply["next"]) == 20_000
    assert [entry["episodeNo"] for entry in reply["next"][:3]] == [2, 3, 4]
    await admin.post("fault", {"playNextCount": 0})
    assert (await play(http, backend, "f1", 1))[1]["next"] == []
    await admin.post("fault", {"playNextCount": None})
    assert [entry["episodeNo"] for entry in (await play(http, backend, "f1", 1))[1]["next"]] == [2, 3]


@pytest.mark.parametrize("mode", ["longVid", "controlChars", "scriptSubtitles", "expired", "farFuture"])
async def test_hostile_ticket_values(backend, http, admin: Admin, mode: str) -> None:
    await admin.post("fault", {"playReply": mode})
    status, reply = await play(http, backend, "f1", 1)
    current = reply["current"]
    assert status == 200 and reply["ok"] is True
    if mode == "longVid":
        assert len(current["vid"]) == 4 << 20
    elif mode == "controlChars":
        assert "\x1b" in current["vid"] and "\r\n" in current["playAuthToken"]
    elif mode == "scriptSubtitles":
        assert current["subtitles"] == [{"lang": "vi", "url": "javascript:alert(1)"}]
    elif mode == "expired":
        assert seconds_left(current["expiresAt"]) < -3500
    else:
        assert current["expiresAt"] == "9999-12-31T23:59:59-23:59"
    assert reply["next"][0]["ticket"]["vid"] == "f1-e2", "only the current ticket is hostile"
