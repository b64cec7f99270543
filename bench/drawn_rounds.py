"""What the final check can do on a whole hw4 program at each budget, whole rounds against drawn
ones, from the recorded per-test times and a chosen per-run noise (no GPU: synthetic runs).

    python bench/drawn_rounds.py [--noise 0.06,0.03] [--budgets 30,60,120,300] [--trials 200]

Each trial compares the program with itself and with a copy slowed by 3% of its total (a sleep
of the same length in every test, as bench/rank_check.py makes it) through worker/timing/
paired.py's `compare`: each run is the test's recorded median (bench/recorded/
suite_totals_h100x2_keeper_2026-11-28.json, one student's cuda-program through the gate and the
keeper, 10.5 s over 30 tests) times lognormal noise of the given sd, independent run to run.
"whole" rounds run every test for both sides; "drawn" ones one test each, where
worker/timing/round_plan.py draws it. The real machine's rounds: bench/rank_check.py.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
from pathlib import Path

from flashjudge.contract.paired import A_FASTER, B_FASTER, TIED
from worker.timing.paired import PairedConfig, compare
from worker.timing.sample import Runner, Sample
from worker.timing.sequential import RuleConfig

RECORDED = Path(__file__).parent / "recorded" / "suite_totals_h100x2_keeper_2026-11-28.json"


def medians(path: Path = RECORDED) -> dict[str, float]:
    """Each test's median over every recorded pass."""
    runs = [run for condition in json.loads(path.read_text()) for run in condition["runs"]]
    return {t: statistics.median(run[t] for run in runs) for t in sorted(runs[0])}


def runner(seconds: dict[str, float], noise: float, rng: random.Random,
           extra: float = 0.0) -> Runner:
    return lambda t: Sample(seconds[t] * math.exp(rng.gauss(0.0, noise)) + extra, True)


def row(seconds: dict[str, float], noise: float, budget: float, drawn: bool,
        trials: int, rule: RuleConfig) -> str:
    """One line: same program tied %, 3% slower right % and wrong %, its mean GPU s and rounds,
    and the same program's mean GPU s."""
    sleep = 0.03 * sum(seconds.values()) / len(seconds)
    tests, tied, right, wrong, gpu, rounds, same_gpu = list(seconds), 0, 0, 0, [], [], []
    for trial in range(trials):
        rng = random.Random(2 * trial)  # each case its own stream: how one ends moves no other
        plain = {t: (s, s) for t, s in seconds.items()} if drawn else {}
        same = compare(runner(seconds, noise, rng), runner(seconds, noise, rng), tests,
                       PairedConfig(budget, rule, plain, trial))
        tied += same.outcome == TIED
        same_gpu.append(same.gpu_s)
        rng = random.Random(2 * trial + 1)
        slowed = {t: (s, s + sleep) for t, s in seconds.items()} if drawn else {}
        slow = compare(runner(seconds, noise, rng), runner(seconds, noise, rng, sleep), tests,
                       PairedConfig(budget, rule, slowed, trial))
        right += slow.outcome == A_FASTER
        wrong += slow.outcome == B_FASTER
        gpu.append(slow.gpu_s)
        rounds.append(len(slow.rounds))
    pct = 100 / trials
    return (f"| {noise:.0%} | {budget:g} | {'drawn' if drawn else 'whole'} | {tied * pct:.1f} | "
            f"{right * pct:.1f} | {wrong * pct:.1f} | {statistics.fmean(gpu):.1f} | "
            f"{statistics.fmean(rounds):.0f} | {statistics.fmean(same_gpu):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--noise", default="0.06,0.03", help="per-run sd (relative), a list")
    parser.add_argument("--budgets", default="30,60,120,300", help="GPU s per pair, a list")
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--futility", type=float, default=RuleConfig.futility,
                        help="the rule's futility stop (0: ties run to the budget, as before)")
    args = parser.parse_args()
    seconds = medians()
    print(f"whole hw4 program: {len(seconds)} tests, {sum(seconds.values()):.2f} s a pass; "
          f"{args.trials} trials per row")
    print("| per-run noise | budget (GPU s per pair) | rounds of | same: tied % | "
          "3% slower: right % | wrong % | GPU s (slower) | rounds (slower) | GPU s (same) |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for noise in [float(n) for n in args.noise.split(",")]:
        for budget in [float(b) for b in args.budgets.split(",")]:
            for drawn in (False, True):
                print(row(seconds, noise, budget, drawn, args.trials,
                          RuleConfig(futility=args.futility)), flush=True)


if __name__ == "__main__":
    main()
