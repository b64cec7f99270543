"""A paired comparison of two judged submissions on one machine (the final standing).

Both are built once (worker.pipeline.test_runner: the judge's own build, inputs and sandbox) and
then run round after round on the same prepared inputs: in each round every compared test runs
once for each side (or, where whole rounds are too dear for the budget, one test drawn by
worker/timing/round_plan.py), the two back to back, A then B in even rounds and B then A in odd
ones, so a drift of the machine or a warm cache favours neither. After each round the stopping
rule (worker/timing/sequential.py) reads the rounds' ln(A/B) and says ordered, tied, or go on; a
round is started only if it fits the budget (priced at the dearest round so far plus 10%), and
the rule is told how many rounds the budget allows in all, so that it can tie a pair that no
longer has an order in reach.
Each round holds the node alone (worker/running/nodelock.py): the other GPUs' test runs wait
for it, as CUDA start-up on one GPU slows it on the others.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flashjudge.contract.paired import FAILED, PairedResult, PairedRound, finite
from worker.pipeline import JudgeConfig, JudgeRequest, test_runner
from worker.running.nodelock import NodeLock
from worker.timing.result_samples import TestOutcome, sample_from_result
from worker.timing.round_plan import Plan, linearized, plan
from worker.timing.sample import Runner, Sample
from worker.timing.sequential import OPEN, Decision, RuleConfig, decide

COST_MARGIN = 0.1  # a next round is priced at the dearest one so far times 1 + this


class RunFailed(Exception):
    """A run of one side did not pass: its time cannot be compared (the message says which)."""


@dataclass(frozen=True)
class PairedConfig:
    """The comparison's limits."""

    budget_s: float  # GPU seconds the rounds may hold
    rule: RuleConfig = RuleConfig()  # when to stop
    judged: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # per test, A's
    # and B's judged seconds: where drawn rounds draw (round_plan.py); empty: whole rounds
    seed: int | None = None  # the draws' seed (None: fresh)


def timed(run: Runner, side: str, test_id: str, round_no: int) -> Sample:
    """One run; a failed one ends the comparison (a flaky program has no time to rank by)."""
    sample = run(test_id)
    if not sample.passed:
        raise RunFailed(f"{side}'s run of {test_id} in round {round_no + 1} did not pass")
    return sample


def one_round(run_a: Runner, run_b: Runner, tests: Sequence[str], round_no: int) -> PairedRound:
    """Every test once per side, interleaved test by test; A first in even rounds."""
    a_first = round_no % 2 == 0
    a_s = b_s = cost = 0.0
    for test_id in tests:
        order = (("A", run_a), ("B", run_b)) if a_first else (("B", run_b), ("A", run_a))
        for side, run in order:
            sample = timed(run, side, test_id, round_no)
            cost += sample.cost
            if side == "A":
                a_s += sample.seconds
            else:
                b_s += sample.seconds
    return PairedRound(a_s, b_s, cost, a_first)


def planned_round(run_a: Runner, run_b: Runner, tests: Plan, rng: random.Random,
                  round_no: int) -> PairedRound:
    """The plan's next round: every test, or one drawn test with the chance it had."""
    chosen, test_id, p = tests.pick(rng)
    return dataclasses.replace(one_round(run_a, run_b, chosen, round_no), test=test_id, p=p)


def log_ratio(r: PairedRound) -> float:
    return math.log(max(r.a_s, 1e-9) / max(r.b_s, 1e-9))


def decision(rounds: Sequence[PairedRound], rule: RuleConfig, last: bool = False,
             horizon: int | None = None) -> Decision:
    """The rule on whole rounds' ln(A/B), or on drawn rounds' linearized values (untrimmed:
    round_plan.py says why)."""
    if not rounds:
        return decide([0.0], rule, last=last)
    if rounds[0].drawn:
        return decide(linearized(rounds), dataclasses.replace(rule, trim=0.0), last, horizon)
    return decide([log_ratio(r) for r in rounds], rule, last, horizon)


def budget_reach(rounds: Sequence[PairedRound], budget_s: float,
                 max_rounds: int) -> tuple[bool, int]:
    """(whether no further round fits the budget, the most rounds it allows in all): the next
    round priced at the dearest so far plus COST_MARGIN, the rest at the mean so far."""
    spent = sum(r.cost_s for r in rounds)
    last = spent + max(r.cost_s for r in rounds) * (1 + COST_MARGIN) > budget_s
    mean = spent / len(rounds)
    more = int(max(budget_s - spent, 0.0) / mean) if mean > 0 else max_rounds
    return last, min(max_rounds, len(rounds) + more)


def result_of(decision: Decision, rounds: list[PairedRound]) -> PairedResult:
    return PairedResult(decision.outcome, decision.reason, rounds, decision.mean,
                        finite(decision.low), finite(decision.high),
                        sum(r.cost_s for r in rounds))


def compare(run_a: Runner, run_b: Runner, tests: Sequence[str], config: PairedConfig,
            node: NodeLock | None = None) -> PairedResult:
    """Rounds until the rule decides or the budget ends them; a failed run ends it as FAILED.
    Each round holds `node` alone: the node's other test runs wait for it (nodelock.py)."""
    rounds: list[PairedRound] = []
    tests_of = plan(tests, config.budget_s, config.judged)
    rng = random.Random(config.seed)
    while True:
        try:
            with node.alone() if node is not None else contextlib.nullcontext():
                rounds.append(planned_round(run_a, run_b, tests_of, rng, len(rounds)))
        except RunFailed as exc:
            failed = result_of(decision(rounds, config.rule), rounds)
            failed.outcome, failed.reason, failed.error = FAILED, "a run failed", str(exc)
            return failed
        last, horizon = budget_reach(rounds, config.budget_s, config.rule.max_rounds)
        decided = decision(rounds, config.rule, last, horizon)
        if decided.outcome != OPEN:
            return result_of(decided, rounds)


def sampled(run_test: Callable[[str], TestOutcome]) -> Runner:
    """A pipeline test runner as the comparison's: each TestResult as a Sample."""
    return lambda test_id: sample_from_result(run_test(test_id))


def compare_submissions(a: JudgeRequest, b: JudgeRequest, tests: Sequence[str],
                        cache_dir: str | Path, config: PairedConfig,
                        judge_config: JudgeConfig | None = None) -> PairedResult:
    """Build both (raises SystemFailure when one no longer builds), prepare the suite once, and
    compare them on `tests`."""
    with contextlib.ExitStack() as stack:
        run_a = stack.enter_context(test_runner(a, cache_dir, config=judge_config))
        run_b = stack.enter_context(test_runner(b, cache_dir, config=judge_config))
        node = judge_config.node_lock if judge_config is not None else None
        return compare(sampled(run_a), sampled(run_b), tests, config, node)
