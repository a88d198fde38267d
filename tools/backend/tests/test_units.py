"""Pure functions: emit specs, placeholders, fault parsing, tokens, scenario validation."""

from __future__ import annotations

import pytest

from tools.backend.emits import EmitSpec
from tools.backend.faults import actions_reply_status, parse_fault_request
from tools.backend.scenario import parse_scenario, substitute
from tools.backend.state import bearer_token

OVERLAY = {"timelineId": "tl1", "typeTimeline": 1}


def test_emit_spec_shapes() -> None:
    wrapped, tid = EmitSpec.from_json({"event": "overlay", "overlay": OVERLAY,
                                       "trackingId": "t1", "emitTimestamp": 5}).build()
    assert (wrapped, tid) == ({"data": OVERLAY, "_trackingId": "t1", "_emitTimestamp": 5}, "t1")
    flat, _ = EmitSpec.from_json({"event": "ex-overlay", "overlay": OVERLAY, "shape": "flat",
                                  "trackingId": "t1", "emitTimestamp": 5}).build()
    assert flat == {**OVERLAY, "_trackingId": "t1", "_emitTimestamp": 5}
    untracked, tid = EmitSpec.from_json({"event": "overlay", "overlay": OVERLAY,
                                         "shape": "flat"}).build()
    assert (untracked, tid) == (OVERLAY, None)
    spec = EmitSpec.from_json({"event": "overlay", "overlay": OVERLAY, "trackingId": "auto"})
    (first, a), (_, b) = spec.build(), spec.build()
    assert a != b and first["_trackingId"] == a and first["_emitTimestamp"] > 1.7e12
    raw, _ = EmitSpec.from_json({"event": "anything", "payload": [1, 2]}).build()
    assert raw == [1, 2]


def test_substitute_replaces_in_nested_strings_only() -> None:
    value = {"u": "{base}/a?x={cycle}", "l": ["{base}", 3, None], "n": {"k": "{cycle}"}}
    assert substitute(value, {"{base}": "http://h:1", "{cycle}": "2"}) == {
        "u": "http://h:1/a?x=2", "l": ["http://h:1", 3, None], "n": {"k": "2"}}


def test_fault_request_parsing() -> None:
    request = parse_fault_request({"refuseConnections": True, "restFail": "malformed",
                                   "actionsReply": False, "dropSockets": "rst",
                                   "stopPings": False, "restDelayMs": None})
    assert request.settings == {"refuseConnections": "connect_error", "restFail": "malformed",
                                "actionsReply": "false", "restDelayMs": 0}
    assert (request.drop, request.stop_pings, request.disconnect) == ("rst", False, False)
    assert parse_fault_request({"actionsReply": None}).settings == {"actionsReply": "success"}
    assert actions_reply_status("http503") == 503 and actions_reply_status("EX400") is None
    with pytest.raises(ValueError, match="unknown knob"):
        parse_fault_request({"refuse": True})


def test_bearer_token() -> None:
    assert bearer_token(None) is None
    assert bearer_token("Bearer abc") == "abc" and bearer_token("bearer  abc ") == "abc"
    for bad in ("Basic abc", "Bearer", "abc"):
        with pytest.raises(ValueError):
            bearer_token(bad)


@pytest.mark.parametrize(
    "document,message",
    [
        ({"room": {}}, "unknown top-level keys"),
        ({"rooms": {"r": {"events": [], "loop": 1}}}, "unknown keys"),
        ({"rooms": {"r": [{"event": "overlay", "payload": {}}]}}, "at must be"),
        ({"rooms": {"r": [{"at": 1, "event": "overlay"}]}}, "exactly one of payload"),
        ({"rooms": {"r": {"loopAfter": 1, "events": [
            {"at": 2, "event": "x", "payload": {}}]}}}, "loopAfter must be"),
        ({"users": {"t": {"userId": ""}}}, "userId must be"),
    ],
)
def test_scenario_validation(document: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_scenario(document)


def test_scenario_events_are_sorted_by_time() -> None:
    scenario = parse_scenario({"rooms": {"r": [{"at": 3, "event": "b", "payload": 1},
                                               {"at": 1, "event": "a", "payload": 2}]}})
    assert [e.spec["event"] for e in scenario.rooms["r"].events] == ["a", "b"]
