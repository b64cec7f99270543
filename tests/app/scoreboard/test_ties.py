"""Ties on the board: neighbours the measured noise does not separate share a rank,
never across different scores or passed tests; groups are led by their first row; paired runs
settle a pair either way (the seam paired19 feeds)."""

from __future__ import annotations

from app.scoreboard.ties import (
    SETTLED_ORDERED,
    SETTLED_TIED,
    WITHIN_NOISE,
    Entry,
    place,
)


def row(name: str, total: float, band: float | None, score: float = 60, passed: int = 20
        ) -> Entry:
    return Entry(name, score, passed, total, band)


def labels(rows: list[Entry], settled=()) -> list[tuple[str, str]]:
    return [(p.id, p.label) for p in place(rows, settled)]


def test_the_boards_near_misses_tie_at_95_percent():
    # the real boards: ting and roger 7 ms apart with bands of a second; chien and kyle 0.49 s
    # apart with bands whose combined 95% width is 0.64 s
    placed = place([row("ting", 18.350, 1.19), row("roger", 18.357, 0.71)])
    assert [(p.label, p.reason) for p in placed] == [("1=", WITHIN_NOISE), ("1=", WITHIN_NOISE)]
    assert labels([row("chien", 17.19, 0.49), row("kyle", 17.68, 0.41)]) == [
        ("chien", "1="), ("kyle", "1=")]


def test_totals_further_apart_than_the_noise_keep_their_order():
    assert labels([row("a", 10.0, 0.1), row("b", 10.2, 0.1), row("c", 11.0, 0.1)]) == [
        ("a", "1"), ("b", "2"), ("c", "3")]


def test_never_a_tie_across_scores_or_passed_tests_however_wide_the_bands():
    rows = [row("alice", 10.0, 5.0, score=60), row("bob", 10.0, 5.0, score=48),
            row("carol", 10.0, 5.0, score=48, passed=19)]
    assert labels(rows) == [("alice", "1"), ("bob", "2"), ("carol", "3")]


def test_an_unmeasured_total_ties_only_an_equal_one():
    assert labels([row("a", 5.0, None), row("b", 5.0, None), row("c", 5.001, 2.0)]) == [
        ("a", "1="), ("b", "1="), ("c", "3")]


def test_a_group_is_led_by_its_first_row_not_chained():
    # a = b and b = c, but c is beyond a's noise: c starts the next group
    rows = [row("a", 10.0, 0.3), row("b", 10.35, 0.3), row("c", 10.7, 0.3), row("d", 10.9, 0.3)]
    assert labels(rows) == [("a", "1="), ("b", "1="), ("c", "3="), ("d", "3=")]


def test_settled_pairs_tie_beyond_the_bands_or_break_a_near_tie():
    far = [row("a", 10.0, 0.1), row("b", 12.0, 0.1)]
    placed = place(far, [frozenset({"a", "b"})])
    assert [(p.label, p.reason) for p in placed] == [("1=", SETTLED_TIED), ("1=", SETTLED_TIED)]
    near = [row("a", 10.0, 1.0), row("b", 10.1, 1.0)]
    placed = place(near, [("a", "b")])
    assert [(p.label, p.reason) for p in placed] == [("1", ""), ("2", SETTLED_ORDERED)]


def test_paired_runs_that_order_a_pair_the_other_way_swap_it():
    near = [row("a", 10.0, 1.0), row("b", 10.1, 1.0)]
    assert labels(near, [("b", "a")]) == [("b", "1"), ("a", "2")]
    across = [row("a", 10.0, 1.0, score=60), row("b", 10.1, 1.0, score=57)]
    assert labels(across, [("b", "a")]) == [("a", "1"), ("b", "2")]  # the score comes first
