"""The paired comparison's stopping rule on synthetic rounds (seeded, so every run reads the same
numbers): equally fast programs come out tied, a 3% slower one is ordered below, never above."""

from __future__ import annotations

import math
import random
from collections import Counter

from worker.timing.sequential import (
    A_FASTER,
    B_FASTER,
    BUDGET,
    EQUIVALENT,
    OPEN,
    TIED,
    Decision,
    RuleConfig,
    decide,
    looks,
    t_quantile,
)

TRIALS = 300


def one_run(rng: random.Random, sd: float, outliers: float) -> float:
    """One run's relative time: normal jitter, now and then a one-sided slow outlier (+30%)."""
    slow = 1.3 if rng.random() < outliers else 1.0
    return math.exp(rng.gauss(0.0, sd)) * slow


def trial(rng: random.Random, b_slower: float, sd: float = 0.03,
          outliers: float = 0.0) -> Decision:
    """Rounds of ln(A/B) until the rule decides (A's total 1 s, B's 1 + b_slower)."""
    ratios: list[float] = []
    while True:
        a = one_run(rng, sd, outliers)
        b = one_run(rng, sd, outliers) * (1 + b_slower)
        ratios.append(math.log(a / b))
        decision = decide(ratios)
        if decision.outcome != OPEN:
            return decision


def outcomes(b_slower: float, seed: int, **kwargs: float) -> Counter[str]:
    rng = random.Random(seed)
    return Counter(trial(rng, b_slower, **kwargs).outcome for _ in range(TRIALS))


def test_the_same_program_twice_comes_out_tied_in_95_percent():
    found = outcomes(0.0, seed=1)
    assert found[TIED] >= 0.95 * TRIALS, found


def test_a_copy_3_percent_slower_is_ordered_below_and_never_above():
    found = outcomes(0.03, seed=2)
    assert found[A_FASTER] >= 0.95 * TRIALS and found[B_FASTER] == 0, found


def test_rare_slow_outliers_neither_order_equals_nor_hide_a_3_percent_gap():
    assert outcomes(0.0, seed=3, outliers=0.05)[TIED] >= 0.95 * TRIALS
    found = outcomes(0.03, seed=4, outliers=0.05)
    assert found[A_FASTER] >= 0.95 * TRIALS and found[B_FASTER] == 0, found


def test_a_clear_gap_is_ordered_at_the_first_look():
    ratios = [math.log(1.0 / 1.2)] * 3 + [math.log(1.01 / 1.2)] * 3
    decision = decide(ratios)
    assert (decision.outcome, decision.reason, decision.rounds) == (A_FASTER, "ordered", 6)


def test_equal_rounds_inside_the_margin_are_tied_early():
    rng = random.Random(5)
    ratios = [rng.gauss(0.0, 0.001) for _ in range(8)]
    assert (decide(ratios).outcome, decide(ratios).reason) == (TIED, EQUIVALENT)


def test_the_rule_only_stops_at_its_looks_unless_the_budget_ends_it():
    ratios = [math.log(1.0 / 1.2)] * 7  # 7 is not a look
    assert decide(ratios).outcome == OPEN
    short = [math.log(1.0 / 1.2)] * 3  # clearly apart, but too few rounds to claim an order
    assert (decide(short, last=True).outcome, decide(short, last=True).reason) == (TIED, BUDGET)
    assert decide(ratios, last=True).outcome == A_FASTER


def test_the_looks_grow_geometrically_up_to_the_last_round():
    assert looks(RuleConfig(min_rounds=6, max_rounds=30)) == [6, 8, 11, 15, 21, 29, 30]


def test_t_quantiles_match_the_tables():
    assert abs(t_quantile(0.975, 4) - 2.776) < 0.01
    assert abs(t_quantile(0.975, 30) - 2.042) < 0.005
