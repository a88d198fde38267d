"""The player's ticket bookkeeping (playercore.tickets), without a browser."""

from __future__ import annotations

from playercore.tickets import Tickets


def play(episode=1, start_at=0, token="pat_secret"):
    return {"filmId": "f1", "episodeNo": episode, "vid": f"f1-e{episode}", "playAuthToken": token,
            "startAt": start_at, "subtitles": [], "expiresAt": "2026-11-30T10:17:51.990Z"}


def test_a_played_ticket_is_checked_until_refused_once():
    tickets = Tickets()
    ticket = tickets.play(play(start_at=0))
    assert ticket is not None and tickets.to_check() is ticket
    assert "pat_secret" not in repr(ticket)  # the token never reaches a log line
    assert tickets.refuse(ticket) is True
    assert tickets.refuse(ticket) is False  # reported once
    assert tickets.to_check() is None
    fresh = tickets.play(play(start_at=42.5))
    assert fresh is not None and fresh.start_at == 42.5 and tickets.to_check() is fresh


def test_a_refusal_of_a_replaced_ticket_is_not_news():
    tickets = Tickets()
    old = tickets.play(play())
    tickets.play(play(start_at=3))
    assert old is not None and tickets.refuse(old) is False


def test_observer_copies_and_malformed_tickets_do_not_play():
    tickets = Tickets()
    assert tickets.play(play(token=None)) is None
    assert tickets.play({**play(), "episodeNo": True}) is None
    assert tickets.play({**play(), "vid": ""}) is None
    assert tickets.current is None
    assert tickets.play({**play(), "startAt": -3}).start_at == 0.0  # type: ignore[union-attr]


def test_preloads_are_kept_until_they_play():
    tickets = Tickets()
    tickets.preload(play(episode=2))
    tickets.preload(play(episode=3))
    assert sorted(tickets.preloaded) == [("f1", 2), ("f1", 3)]
    tickets.play(play(episode=2))
    assert sorted(tickets.preloaded) == [("f1", 3)]


def test_the_end_of_an_episode_starts_the_next():
    tickets = Tickets()
    assert tickets.next_episode() is None
    tickets.play(play(episode=4))
    assert tickets.next_episode() == ("f1", 5)


def test_paywall_and_message_stop_the_video_and_only_a_retryable_message_retries():
    tickets = Tickets()
    tickets.play(play())
    assert tickets.state({"filmId": "f1", "episodeNo": 1, "state": "playing"}) == "playing"
    assert tickets.current is not None and tickets.retry() is None
    tickets.state({"filmId": "f-locked", "episodeNo": 1, "state": "paywall"})
    assert tickets.current is None and tickets.to_check() is None and tickets.retry() is None
    tickets.state({"filmId": "f-busy", "episodeNo": 2, "state": "message", "text": "Busy", "canRetry": True})
    assert tickets.retry() == ("f-busy", 2)
    tickets.state({"filmId": "f-x", "episodeNo": 1, "state": "message", "text": "Gone", "canRetry": False})
    assert tickets.retry() is None
