"""Each overlay's load outcome reported once (playercore.outcomes)."""

from __future__ import annotations

from playercore.outcomes import LoadOutcome, LoadOutcomes


def test_the_first_outcome_of_a_shown_overlay_is_the_only_one():
    outcomes = LoadOutcomes()
    assert outcomes.outcome("ov-1", "loaded") is None  # not shown
    outcomes.expect("ov-1")
    assert outcomes.outcome("ov-1", "failed", "HTTP 404") == LoadOutcome("ov-1", "failed", "HTTP 404")
    assert outcomes.outcome("ov-1", "loaded") is None
    assert outcomes.timed_out("ov-1", 20) is None


def test_a_timeout_forget_and_a_new_show():
    outcomes = LoadOutcomes()
    outcomes.expect("ov-1")
    assert outcomes.timed_out("ov-1", 2.5) == LoadOutcome("ov-1", "failed", "not loaded within 2.5 s")
    outcomes.expect("ov-1")  # shown again (replaced): a new outcome
    outcomes.forget("ov-1")
    assert outcomes.outcome("ov-1", "loaded") is None
    outcomes.expect("ov-2")
    outcomes.reset()
    assert not outcomes.is_expected("ov-2")
