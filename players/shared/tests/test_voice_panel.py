"""The voice panel's decisions (playercore.voice), without a browser: what the panel shows, when
the programme ducks and comes back, what the mute key asks."""

from __future__ import annotations

from playercore.voice import (DUCK_RAMP_MS, DUCKED_VOLUME, NORMAL_VOLUME, RESTORE_HOLD_MS, RESTORE_RAMP_MS,
                              VoicePanel, VolumeChange)

JOINED = {"room": "watch-party", "state": "joined", "selfId": "4711", "muted": False, "error": None,
          "participants": [{"peerId": "4711", "display": "Alice", "muted": False, "talking": False},
                           {"peerId": "88", "display": None, "muted": True, "talking": False}]}


def talking(peer_id, on):
    return {"room": "watch-party", "peerId": peer_id, "talking": on}


def test_no_panel_until_joined_and_none_after_leaving():
    panel = VoicePanel()
    panel.redraw(None)
    assert panel.view() is None and panel.mute_request() is None
    assert panel.apply("voice.state", {"room": "watch-party", "state": "connecting", "participants": 0}) is True
    panel.redraw({**JOINED, "state": "connecting", "participants": []})
    assert panel.view() is None
    panel.redraw(JOINED)
    view = panel.view()
    assert view is not None and [(p["display"], p["muted"], p["self"]) for p in view["participants"]] == [
        ("Alice", False, True), ("88", True, False)]  # no display: the peer id
    panel.apply("voice.state", {**JOINED, "state": "reconnecting", "participants": 2})
    assert panel.view()["state"] == "reconnecting"
    panel.apply("voice.state", {**JOINED, "state": "left", "participants": 0, "reason": "left"})
    assert panel.view() is None


def test_only_others_talking_duck_quickly_and_the_restore_waits_then_ramps():
    panel = VoicePanel()
    panel.redraw(JOINED)
    assert panel.volume_change() is None
    panel.apply("voice.talking", talking("4711", True))
    assert panel.volume_change() is None  # this box talking lowers nothing
    panel.apply("voice.talking", talking("88", True))
    assert panel.talkers() == ["88"]
    assert panel.volume_change() == VolumeChange(DUCKED_VOLUME, DUCK_RAMP_MS, 0)
    assert panel.volume_change() is None  # once per change
    panel.apply("voice.talking", talking("88", False))
    assert panel.volume_change() == VolumeChange(NORMAL_VOLUME, RESTORE_RAMP_MS, RESTORE_HOLD_MS)


def test_leaving_while_a_friend_talks_restores_the_programme():
    panel = VoicePanel()
    panel.redraw(JOINED)
    panel.apply("voice.talking", talking("88", True))
    assert panel.volume_change().level == DUCKED_VOLUME
    panel.apply("voice.state", {**JOINED, "state": "left", "participants": 0})
    assert panel.talkers() == [] and panel.volume_change().level == NORMAL_VOLUME


def test_the_mute_key_asks_the_other_way_round():
    panel = VoicePanel()
    panel.redraw(JOINED)
    assert panel.mute_request() == {"muted": True}
    panel.muted({"room": "watch-party", "muted": True})
    assert panel.mute_request() == {"muted": False}
    assert panel.view()["muted"] is True and panel.view()["participants"][0]["muted"] is True


def test_a_count_the_panel_does_not_have_asks_for_the_status():
    panel = VoicePanel()
    panel.redraw(JOINED)
    assert panel.apply("voice.peer", {"room": "watch-party", "peerId": "93", "display": "Carol",
                                      "event": "joined", "muted": False}) is False
    assert panel.apply("voice.state", {**JOINED, "participants": 4}) is True


def test_a_reloaded_page_is_ducked_again():
    panel = VoicePanel()
    panel.redraw(JOINED)
    panel.apply("voice.talking", talking("88", True))
    assert panel.volume_change().level == DUCKED_VOLUME
    panel.page_reloaded()  # the new page plays at the normal volume
    assert panel.volume_change() == VolumeChange(DUCKED_VOLUME, DUCK_RAMP_MS, 0)
