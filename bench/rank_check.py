"""Is the final standing worth grading on? Paired runs of the same program submitted
twice, and of a copy slowed by a known 3%, on this machine.

    python bench/rank_check.py [--trials 20] [--source tests/hostile/cuda-correct/hw4.cu]
        [--language cuda-program] [--suite hw4-mini] [--tests t01] [--budget 20]
        [--slowdown 0.03] [--resample 2000] [--order-margin 0.005] [--min-rounds 11]
        [--futility 0.02]

Both copies of each program are built once (as a worker reuses its builds); each trial is one
whole paired comparison (worker/timing/paired.py: A B / B A rounds until the rule of
worker/timing/sequential.py orders or ties them, or the budget is spent). The slowed copy sleeps
`slowdown` x (the program's median total over --tests, measured first) / (number of tests) in a
C constructor, inside every timed run: its total is `slowdown` higher. Its side alternates
between trials, so "ordered right" means the slowed copy came out below, whichever side it ran
on. Targets: same program tied in >= 95%; slowed copy ordered right in >= 95% and never wrong.

A whole suite (`--suite hw4 --tests t01,...,t30`) is too dear for rounds of every test: each
round then runs one test for both sides, drawn where it tells most (worker/timing/round_plan.py)
from the per-test seconds of --judged-passes passes run first, as the service sends each side's
judged seconds.

Further rows replay the measured rounds: each resampled trial draws rounds (with replacement)
from the rounds all real trials of that case ran and applies the same rule and budget, and at
the larger budgets of --replay-budgets: many more trials than the machine's time allows, from
the machine's own noise. `--replay FILE` replays a `--dump` without running
(bench/recorded/rank_check_h100_2026-11-26.json: the H100 rounds of docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from flashjudge.contract.paired import A_FASTER, B_FASTER, FAILED, TIED, PairedResult, PairedRound
from testcases.suite import load_suite
from worker.celery_adapter.node import start_node_parts
from worker.pipeline import JudgeConfig, JudgeRequest, test_runner
from worker.sandbox.gpu.driver_keeper import stop_keeper
from worker.settings import WorkerSettings
from worker.timing.paired import (
    PairedConfig,
    budget_reach,
    compare,
    decision,
    log_ratio,
    sampled,
)
from worker.timing.round_plan import linearized
from worker.timing.sample import Runner
from worker.timing.sequential import OPEN, RuleConfig, looks

REPLAY_ONLY = "replay only"  # a trial of a first-format dump: its rounds, not its outcome


@dataclass
class Tally:
    """One case's trials."""

    case: str  # "same program" | "3% slower"
    slow_side: list[str | None] = field(default_factory=list)  # per trial: "A", "B" or None
    results: list[PairedResult] = field(default_factory=list)  # per trial

    def add(self, result: PairedResult, slow: str | None) -> None:
        self.results.append(result)
        self.slow_side.append(slow)

    def row(self, label: str) -> str:
        n = len(self.results)
        tied = sum(r.outcome == TIED for r in self.results)
        right = sum(ordered_right(r, s) for r, s in zip(self.results, self.slow_side,
                                                        strict=True))
        wrong = n - tied - right - sum(r.outcome not in (TIED, A_FASTER, B_FASTER)
                                       for r in self.results)
        gpu = statistics.fmean(r.gpu_s for r in self.results) if n else 0.0
        rounds = statistics.fmean(len(r.rounds) for r in self.results) if n else 0.0
        right_text = f"{100 * right / n:6.1f}" if self.slow_side[0] else "     -"
        return (f"{self.case + label:<24} {n:>6} {100 * tied / n:6.1f} {right_text} "
                f"{100 * wrong / n:6.1f} {gpu:9.1f} {rounds:7.1f}")


def ordered_right(result: PairedResult, slow: str | None) -> bool:
    if slow is None:
        return False
    return result.outcome == (B_FASTER if slow == "A" else A_FASTER)


def slowed(files: dict[str, bytes], sleep_us: int) -> dict[str, bytes]:
    """The program with a sleep of `sleep_us` in a constructor (C and CUDA C++ alike)."""
    prefix = (b"#include <unistd.h>\n__attribute__((constructor)) static void fj_slow(void) "
              b"{ usleep(" + str(sleep_us).encode() + b"); }\n")
    name = next(iter(files))
    return {**files, name: prefix + files[name]}


def device_name() -> str:
    """The GPU's name as nvidia-smi gives it, or "cpu"."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "cpu"
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout else "cpu"


def judged_seconds(run: Runner, tests: list[str], passes: int) -> dict[str, float]:
    """Each test's median over `passes` passes: what a judging would have recorded."""
    seen: dict[str, list[float]] = {t: [] for t in tests}
    for _ in range(passes):
        for t in tests:
            seen[t].append(run(t).seconds)
    return {t: statistics.median(s) for t, s in seen.items()}


def pooled(tally: Tally) -> list[PairedRound]:
    """Every round of the case's trials, a slowed side on A mirrored to B so that each reads
    ln(fast/slow)."""
    return [dataclasses.replace(r, a_s=r.b_s, b_s=r.a_s) if slow == "A" else r
            for result, slow in zip(tally.results, tally.slow_side, strict=True)
            for r in result.rounds]


def resampled(tally: Tally, config: PairedConfig, trials: int, seed: int) -> Tally:
    """Trials replayed from the case's measured rounds (with replacement), same rule and
    budget."""
    pool = pooled(tally)
    rng = random.Random(seed)
    out = Tally(tally.case)
    for _ in range(trials):
        out.add(replay(pool, rng, config), "B" if tally.slow_side[0] else None)
    return out


def rule_values_sd(tally: Tally) -> float:
    """The spread of the values the rule decides on (drawn rounds' linearized estimates): unlike
    ln(A/B) per test it does not count a fixed gap's larger ratio on small tests as noise."""
    return statistics.stdev(linearized(pooled(tally)))


def replay(pool: list[PairedRound], rng: random.Random, config: PairedConfig) -> PairedResult:
    rounds: list[PairedRound] = []
    while True:
        rounds.append(rng.choice(pool))
        last, horizon = budget_reach(rounds, config.budget_s, config.rule.max_rounds)
        decided = decision(rounds, config.rule, last, horizon)
        if decided.outcome != OPEN:
            return PairedResult(decided.outcome, decided.reason, rounds, decided.mean,
                                decided.low, decided.high, sum(r.cost_s for r in rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="real trials per case")
    parser.add_argument("--source", default="tests/hostile/cuda-correct/hw4.cu")
    parser.add_argument("--language", default="cuda-program")
    parser.add_argument("--suite", default="hw4-mini")
    parser.add_argument("--tests", default="t01", help="comma-separated test ids compared")
    parser.add_argument("--budget", type=float, default=20.0, help="GPU seconds per pair")
    parser.add_argument("--slowdown", type=float, default=0.03)
    parser.add_argument("--sleep-us", type=int, default=None,
                        help="the slowed copy's sleep per run (default: --slowdown of the "
                             "measured total per test): a fixed gap in the program's own time, "
                             "whatever the run environment makes of the rest")
    parser.add_argument("--resample", type=int, default=2000, help="replayed trials per case")
    parser.add_argument("--max-rounds", type=int, default=200)
    parser.add_argument("--replay-budgets", default="15,30,60,90",
                        help="GPU s per pair of the replayed tables")
    parser.add_argument("--dump", default=None, help="write every measured round here (JSON)")
    parser.add_argument("--replay", default=None,
                        help="no runs: the tables of --dump files, comma-separated, their trials "
                             "combined (bench/recorded/ holds the H100's)")
    parser.add_argument("--alpha", type=float, default=RuleConfig.alpha)
    parser.add_argument("--futility", type=float, default=RuleConfig.futility,
                        help="tie at a look when an order by the budget's end is less likely "
                             "than this (0: the rule before, which ran ties to the budget)")
    parser.add_argument("--order-margin", type=float, default=RuleConfig.order_margin,
                        help="an order needs the interval clear of +-this (0: the old rule)")
    parser.add_argument("--min-rounds", type=int, default=RuleConfig.min_rounds,
                        help="the first look (6: the old rule)")
    parser.add_argument("--judged-passes", type=int, default=3,
                        help="passes of every test first: the per-test seconds a judging "
                             "would have recorded (where drawn rounds draw, the slowdown)")
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--freeze-gpus", type=int, default=1,
                        help="GPUs a freeze runs its pairs on at once (the wall time printed)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="add to every run's environment (both sides alike), e.g. "
                             "CUDA_DEVICE_MAX_CONNECTIONS=1 (bench/run_noise_sources.py's knobs)")
    parser.add_argument("--stop-after", type=float, default=float("inf"),
                        help="start no trial that would end past this many seconds (a device "
                             "call's limit); the dump keeps every trial ended")
    args = parser.parse_args()
    for kv in args.env:
        if "=" not in kv or not kv.split("=", 1)[0]:
            parser.error(f"--env {kv!r}: expected NAME=VALUE")
    if args.replay:
        replay_file(args)
        return
    settings = WorkerSettings()
    keeper = start_node_parts(settings.machine(), settings.driver_keeper)  # as a worker runs
    print(f"driver keeper: {'up' if keeper is not None else 'none (no GPU, or off)'}")
    try:
        run_check(args, settings)
    finally:
        if keeper is not None:
            stop_keeper(keeper)


def rule_config(args: argparse.Namespace) -> RuleConfig:
    return RuleConfig(alpha=args.alpha, max_rounds=args.max_rounds,
                      order_margin=args.order_margin, min_rounds=args.min_rounds,
                      futility=args.futility)


def load_dumps(paths: str) -> list[Tally]:
    """Trials from one or more --dump files (comma-separated), combined per case. A file of
    format 2 keeps each trial's real outcome and slowed side; the first format (a list of round
    lists per case, bench/recorded/rank_check_h100_2026-11-26.json) only rounds, its slowed side
    alternating B, A as when measured, and its outcomes are not real (replay only)."""
    cases: dict[str, Tally] = {}
    for path in [p for p in paths.split(",") if p.strip()]:
        dumped = json.loads(Path(path).read_text())
        for case, trials in dumped.get("cases", dumped).items():
            tally = cases.setdefault(case, Tally(case))
            for i, trial in enumerate(trials):
                if isinstance(trial, dict):
                    tally.add(PairedResult.from_dict(trial["result"]), trial["slow"])
                    continue
                slow = None if case == "same program" else ("B" if i % 2 == 0 else "A")
                tally.add(PairedResult(FAILED, REPLAY_ONLY,
                                       [PairedRound.from_dict(r) for r in trial]), slow)
    return list(cases.values())


def replay_file(args: argparse.Namespace) -> None:
    """The tables of --dump files: their real trials (format 2) and the replayed ones."""
    tallies = load_dumps(args.replay)
    paired = PairedConfig(args.budget, rule_config(args))
    budgets = [float(b) for b in args.replay_budgets.split(",") if b.strip()]
    print(f"from {args.replay}")
    real = all(r.reason != REPLAY_ONLY for t in tallies for r in t.results)
    report(tallies, paired, args.resample, budgets, real=real)
    freeze_cost(tallies, [paired.budget_s, *budgets], args.freeze_gpus)


def dump(path: str, tallies: list[Tally], device: str) -> None:
    """Every trial so far (rewritten after each, so a run cut short keeps what it measured)."""
    doc = {"format": 2, "device": device,
           "cases": {t.case: [{"slow": s, "result": r.to_dict()}
                              for r, s in zip(t.results, t.slow_side, strict=True)]
                     for t in tallies}}
    Path(path).write_text(json.dumps(doc))


def run_check(args: argparse.Namespace, settings: WorkerSettings) -> None:
    tests = [t.strip() for t in args.tests.split(",") if t.strip()]
    suite = load_suite(args.suite)
    suite = dataclasses.replace(suite, tests=[t for t in suite.tests if t.id in tests])
    extra = dict(kv.split("=", 1) for kv in args.env)
    config: JudgeConfig = settings.judge_config(suite=suite)
    config = dataclasses.replace(config, env={**config.env, **extra})
    files = {Path(args.source).name: Path(args.source).read_bytes()}
    paired = PairedConfig(args.budget, rule_config(args))
    cache = args.cache_dir or tempfile.mkdtemp(prefix="fj-rank-")

    def runner(program: dict[str, bytes]) -> object:
        return test_runner(JudgeRequest(args.language, program, args.suite, tests), cache,
                           config=config)

    with runner(files) as first, runner(dict(files)) as second:  # type: ignore[attr-defined]
        run_a, run_b = sampled(first), sampled(second)
        judged = judged_seconds(run_a, tests, args.judged_passes)
        total = sum(judged.values())
        sleep_us = args.sleep_us or int(args.slowdown * total / len(tests) * 1e6)
        plain = {t: (s, s) for t, s in judged.items()}
        slow_b = {t: (s, s + sleep_us / 1e6) for t, s in judged.items()}
        slow_a = {t: (b, a) for t, (a, b) in slow_b.items()}
        print(f"device: {device_name()}; {args.language} {args.source} on "
              f"{args.suite} {','.join(tests)}: total of per-test medians {total:.4f} s; slowed "
              f"copy +{sleep_us} us per run ({sleep_us * len(tests) / 1e6 / total:.1%}); "
              f"budget {args.budget:g} s per pair"
              f"{'; run environment ' + ' '.join(args.env) if args.env else ''}")
        with runner(slowed(files, sleep_us)) as third:  # type: ignore[attr-defined]
            run_slow = sampled(third)
            same, slow = Tally("same program"), Tally(f"{args.slowdown:.0%} slower")
            began, device = time.monotonic(), device_name()
            for i in range(args.trials):
                spent = time.monotonic() - began
                if i and spent + spent / i > args.stop_after:
                    print(f"stopped after {i} trials: the next would end past "
                          f"--stop-after {args.stop_after:g} s", flush=True)
                    break
                same.add(compare(run_a, run_b, tests, with_judged(paired, plain, i),
                                 config.node_lock), None)
                side = "B" if i % 2 == 0 else "A"
                pair = (run_a, run_slow) if side == "B" else (run_slow, run_a)
                slowed_pair = with_judged(paired, slow_b if side == "B" else slow_a, i)
                slow.add(compare(*pair, tests, slowed_pair, config.node_lock), side)
                print(f"trial {i + 1}: same {same.results[-1].outcome} "
                      f"({len(same.results[-1].rounds)} rounds), slow on {side}: "
                      f"{slow.results[-1].outcome} ({len(slow.results[-1].rounds)} rounds)",
                      flush=True)
                if args.dump:
                    dump(args.dump, [same, slow], device)
    budgets = [float(b) for b in args.replay_budgets.split(",") if b.strip()]
    report([same, slow], paired, args.resample, budgets)
    freeze_cost([same, slow], [paired.budget_s, *budgets], args.freeze_gpus)


def with_judged(paired: PairedConfig, judged: dict[str, tuple[float, float]],
                trial: int) -> PairedConfig:
    """The pair's config as the service sends it: both sides' judged seconds, a seed per trial."""
    return dataclasses.replace(paired, judged=judged, seed=trial)


def report(tallies: list[Tally], paired: PairedConfig, resample: int,
           budgets: list[float], real: bool = True) -> None:
    print(f"\n{'case':<24} {'trials':>6} {'tied%':>6} {'right%':>6} {'wrong%':>6} "
          f"{'GPU s/pair':>9} {'rounds':>7}")
    for tally in tallies if real else []:
        print(tally.row(" (real)"))
    for budget in [paired.budget_s, *budgets]:
        config = dataclasses.replace(paired, budget_s=budget)
        for i, tally in enumerate(tallies):
            if resample and any(r.rounds for r in tally.results):
                print(resampled(tally, config, resample, seed=i).row(f" ({budget:g} s)"))
    for tally in tallies:
        ratios = [log_ratio(r) for res in tally.results for r in res.rounds]
        drawn = any(r.drawn for res in tally.results for r in res.rounds)
        if len(ratios) > 2:
            print(f"{tally.case}: sd of ln(A/B) per {'drawn test' if drawn else 'round'} "
                  f"{statistics.stdev(ratios):.4f} over {len(ratios)} rounds"
                  + (f"; of the rule's values {rule_values_sd(tally):.4f}" if drawn else ""))
    print(f"rule: alpha {paired.rule.alpha}, margin {paired.rule.margin}, order margin "
          f"{paired.rule.order_margin}, looks at "
          f"{looks(paired.rule)} rounds; budget {paired.budget_s:g} GPU s per pair")


def freeze_cost(tallies: list[Tally], budgets: list[float], gpus: int,
                courses: tuple[int, ...] = (100, 300)) -> None:
    """What the freeze of a course costs: one paired check per pair of neighbours in the
    provisional order (one fewer than the students), at the measured GPU s per pair and at each
    budget's cap, the node's GPUs checking pairs at once."""
    spent = [r.gpu_s for t in tallies for r in t.results if r.gpu_s > 0]
    rates = ([("measured", statistics.fmean(spent))] if spent else []) + [
        (f"cap {b:g} s", b) for b in budgets]
    for label, per_pair in rates:
        walls = ", ".join(f"{n} students {(n - 1) * per_pair / gpus / 3600:.2f} h"
                          for n in courses)
        print(f"freeze at {per_pair:.1f} GPU s per pair ({label}) on {gpus} GPU(s): {walls}")


if __name__ == "__main__":
    main()
