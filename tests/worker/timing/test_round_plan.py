"""Drawn rounds of the final check: whole programs too dear for whole rounds are still ordered,
the draws go where two programs differ, and what they estimate is the ratio of the totals the
board ranks, not a mean of per-test ratios. Synthetic runs with seeded noise: the real
comparisons run in test_timing_paired.py (CPU track) and bench/rank_check.py (GPU)."""

from __future__ import annotations

import math
import random

from flashjudge.contract.messages import Attempt, JudgePayload
from flashjudge.contract.paired import A_FASTER, B_FASTER, TIED, PairedPayload, PairedRound
from worker.timing.paired import PairedConfig, budget_reach, compare
from worker.timing.round_plan import FULL_ROUNDS, linearized, plan
from worker.timing.sample import Runner, Sample
from worker.timing.sequential import BUDGET, FUTILE, RuleConfig

# one student's cuda-program on hw4 through the gate and the keeper, per-test medians (s) of
# bench/recorded/suite_totals_h100x2_keeper_2026-11-28.json: 10.5 s for the 30 tests
HW4 = {f"t{i:02d}": s for i, s in enumerate(
    [0.223, 0.229, 0.227, 0.229, 0.237, 0.225, 0.229, 0.228, 0.230, 0.227, 0.596, 0.767, 0.563,
     0.437, 0.428, 0.391, 0.400, 0.351, 0.365, 0.324, 0.449, 0.671, 0.313, 0.426, 0.291, 0.272,
     0.291, 0.277, 0.294, 0.282], start=1)}


def runner(seconds: dict[str, float], noise: float, seed: int, extra: float = 0.0) -> Runner:
    """A program whose test t takes seconds[t] (+ extra) with lognormal noise, seeded."""
    rng = random.Random(seed)
    return lambda t: Sample(seconds[t] * math.exp(rng.gauss(0.0, noise)) + extra, True)


def test_whole_rounds_while_sixty_of_them_fit_the_budget():
    cheap = {"t01": (0.1, 0.1), "t02": (0.1, 0.1)}
    assert not plan(["t01", "t02"], FULL_ROUNDS * 0.4, cheap).drawn
    assert plan(["t01", "t02"], FULL_ROUNDS * 0.4 - 1, cheap).drawn
    assert not plan(["t01", "t02"], 1.0, {"t01": (0.1, 0.1)}).drawn, "a test without figures"
    assert not plan(["t01"], 1.0, {"t01": (0.1, 0.1)}).drawn, "one test: nothing to draw"


def test_the_tests_where_two_programs_differ_are_drawn_most():
    judged = {t: (s, s) for t, s in HW4.items()} | {"t05": (0.237 * 2, 0.237)}
    drawn = plan(list(HW4), 30.0, judged)
    p = dict(zip(drawn.tests, drawn.p, strict=True))
    assert max(p, key=p.__getitem__) == "t05"
    assert p["t05"] > 3 * p["t04"] and min(p.values()) > 0
    assert math.isclose(sum(p.values()), 1.0)


def test_a_whole_hw4_pair_too_dear_for_whole_rounds_is_still_ordered():
    """30 tests, 10.5 s a pass: whole rounds fit 13 times in the default 300 GPU s, under the
    rule's first look, so a 3% slower copy was tied by the budget; drawn rounds order it."""
    sleep = 0.03 * sum(HW4.values()) / len(HW4)
    config = PairedConfig(300.0, RuleConfig(), {t: (s + sleep, s) for t, s in HW4.items()}, 7)
    drawn = compare(runner(HW4, 0.03, 1, sleep), runner(HW4, 0.03, 2), list(HW4), config)
    assert drawn.outcome == B_FASTER and all(r.drawn for r in drawn.rounds), drawn.reason
    assert drawn.gpu_s <= 300.0
    whole = compare(runner(HW4, 0.03, 1, sleep), runner(HW4, 0.03, 2), list(HW4),
                    PairedConfig(300.0, RuleConfig()))
    assert (whole.outcome, whole.reason, len(whole.rounds)) == (TIED, BUDGET, 13)


def test_drawn_rounds_rank_by_the_totals_not_by_a_mean_of_ratios():
    """A is 30% faster on ten small tests and 3% slower on twenty large ones: equal totals
    (22 s each). A mean of per-test ratios would call A clearly faster; the board ties them."""
    b = {f"t{i:02d}": 0.2 if i <= 10 else 1.0 for i in range(1, 31)}
    a = {t: s * (0.7 if s < 0.5 else 1.03) for t, s in b.items()}
    assert math.isclose(sum(a.values()), sum(b.values()))
    judged = {t: (a[t], b[t]) for t in b}
    result = compare(runner(a, 0.01, 3), runner(b, 0.01, 4), list(b),
                     PairedConfig(120.0, RuleConfig(), judged, 5))
    assert result.outcome == TIED and abs(result.mean_log_ratio) < 0.01, result.mean_log_ratio
    mean_of_ratios = sum(math.log(r.a_s / r.b_s) for r in result.rounds) / len(result.rounds)
    assert mean_of_ratios < -0.05, "the twin: what a mean of per-test ratios would have read"


def test_the_same_program_twice_is_tied_and_a_faster_side_is_ordered_above():
    judged = {t: (s, s) for t, s in HW4.items()}
    same = compare(runner(HW4, 0.06, 8), runner(HW4, 0.06, 9), list(HW4),
                   PairedConfig(300.0, RuleConfig(), judged, 10))
    assert same.outcome == TIED
    faster = {t: s * 0.9 for t, s in HW4.items()}
    ordered = compare(runner(faster, 0.06, 11), runner(HW4, 0.06, 12), list(HW4),
                      PairedConfig(300.0, RuleConfig(), judged, 13))
    assert ordered.outcome == A_FASTER and ordered.high is not None and ordered.high < 0


def test_linearized_rounds_average_to_the_log_ratio_of_the_estimated_totals():
    rounds = [PairedRound(1.0, 2.0, 3.0, True, "t01", 0.5),
              PairedRound(3.0, 2.0, 5.0, False, "t02", 0.25)]
    values = linearized(rounds)
    estimated = (1.0 / 0.5 + 3.0 / 0.25) / (2.0 / 0.5 + 2.0 / 0.25)
    assert math.isclose(sum(values) / 2, math.log(estimated))


def test_the_judged_seconds_and_the_drawn_test_cross_the_queue():
    side = JudgePayload(Attempt(5, 1, "k"), "cuda-program", {"hw4.cu": b"int main(){}"}, "hw4",
                        ["t01"])
    job = PairedPayload(1, "k", side, side, 300.0, judged={"t01": (0.2, 0.3)})
    assert PairedPayload.from_dict(job.to_dict()).judged == {"t01": (0.2, 0.3)}
    older = {k: v for k, v in job.to_dict().items() if k != "judged"}
    assert PairedPayload.from_dict(older).judged == {}, "a message of an older service"
    drawn = PairedRound(0.2, 0.3, 0.6, True, "t07", 0.04)
    assert PairedRound.from_dict(drawn.to_dict()) == drawn
    assert "test" not in PairedRound(0.2, 0.3, 0.6, True).to_dict()


def test_the_same_whole_program_twice_is_tied_long_before_the_budget_is_spent():
    """A freeze is mostly ties, and a tie used to hold its pair's whole budget: the comparison
    now tells the rule how many rounds the budget allows, and the rule ties the pair once the
    rest of them could not order it (worker/timing/sequential.py, the futility stop)."""
    judged = {t: (s, s) for t, s in HW4.items()}
    same = compare(runner(HW4, 0.06, 14), runner(HW4, 0.06, 15), list(HW4),
                   PairedConfig(300.0, RuleConfig(), judged, 16))
    assert (same.outcome, same.reason) == (TIED, FUTILE)
    assert same.gpu_s < 150.0
    before = compare(runner(HW4, 0.06, 14), runner(HW4, 0.06, 15), list(HW4),
                     PairedConfig(300.0, RuleConfig(futility=0.0), judged, 16))
    assert before.outcome == TIED and before.reason != FUTILE and before.gpu_s > same.gpu_s


def test_the_budgets_reach_counts_the_rounds_still_affordable():
    rounds = [PairedRound(0.5, 0.5, 1.0, True), PairedRound(0.5, 0.5, 1.0, False)]
    assert budget_reach(rounds, 10.0, 200) == (False, 10)  # 8 more at 1 s each
    assert budget_reach(rounds, 10.0, 5) == (False, 5)  # the rule's last round caps it
    assert budget_reach(rounds, 3.0, 200) == (True, 3)  # 1 s left: under a round plus 10%
