"""Each overlay's budget of bridge posts waiting for the daemon (playercore.bridge_budget), without
a browser."""

from __future__ import annotations

from playercore.bridge_budget import MAX_POST_BYTES, MAX_WAITING, MAX_WAITING_BYTES, BridgeBudget


def test_posts_past_the_count_are_dropped_until_the_daemon_answers():
    budget = BridgeBudget()
    assert all(budget.admit("ov-1", 100) == (True, None) for _ in range(MAX_WAITING))
    sent, note = budget.admit("ov-1", 100)
    assert not sent and note is not None and "dropped 1 so far" in note
    assert budget.admit("ov-2", 100) == (True, None)  # another overlay has its own budget
    budget.answered("ov-1", 100)
    assert budget.admit("ov-1", 100) == (True, None)


def test_posts_past_the_bytes_are_dropped_and_large_ones_refused():
    budget = BridgeBudget()
    post = MAX_POST_BYTES
    admitted = [budget.admit("ov-1", post)[0] for _ in range(MAX_WAITING_BYTES // post + 1)]
    assert admitted == [True] * (MAX_WAITING_BYTES // post) + [False]
    sent, note = budget.admit("ov-2", MAX_POST_BYTES + 1)
    assert not sent and note is not None and f"refused a bridge post of {MAX_POST_BYTES + 1} bytes" in note


def test_notes_come_at_the_first_tenth_and_hundredth_drop_and_totals_at_the_end():
    budget = BridgeBudget()
    for _ in range(MAX_WAITING):
        budget.admit("ov-1", 10)
    notes = [budget.admit("ov-1", 10)[1] for _ in range(100)]
    assert [index + 1 for index, note in enumerate(notes) if note] == [1, 10, 100]
    budget.admit("ov-1", MAX_POST_BYTES + 1)
    assert budget.forget("ov-1") == "overlay ov-1: 100 bridge posts dropped and 1 refused in all"
    assert budget.forget("ov-1") is None
    budget.answered("ov-1", 10)  # a post of a forgotten overlay answered late: nothing to do


def test_a_new_connection_starts_with_nothing_waiting():
    budget = BridgeBudget()
    for _ in range(MAX_WAITING):
        budget.admit("ov-1", 10)
    budget.reset()
    assert budget.admit("ov-1", 10) == (True, None)
