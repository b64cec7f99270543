"""The CPU track beside a CPU hog: the same C program judged with the machine idle and with a busy
loop per core started beside the judge (as another service or a student's shell would), rounds
interleaved so drift hits both alike.

    python bench/cpu_neighbour_check.py [SOURCE] [--suite hw4-mini] [--rounds 6] [--hogs N]

Each judging is what the service does for one upload: `judge()` with the worker's configuration
(the sandbox, the timed runs' cgroup with the highest CPU weight, worker/sandbox/cgroup_layout.py),
then the refinement phase (`refine_submission`, the worker's policy), whose total and band are what
the board ranks. Prints each judging's refined total and band, each condition's median and spread
(sd / mean across judgings), the gap between the medians, and what the board's own tie rule
(app/scoreboard/ties.py) says of every pair of judgings: the same program from two students, one
judged idle and one beside the hog, should be a tie.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
from pathlib import Path

from self_ties import Figure, verdict

from worker.pipeline import JudgeRequest, judge
from worker.settings import get_worker_settings
from worker.timing.refine import refine_submission

DEFAULT_SOURCE = Path(__file__).resolve().parent.parent / "tests/hostile/correct-seq/hw4.c"
BUSY_LOOP = "while :; do :; done"


def judged(source: Path, suite: str) -> Figure:
    """One upload's verdict pass and refinement (every test AC, or the bench stops)."""
    settings = get_worker_settings()
    config = settings.judge_config()
    request = JudgeRequest("c-program", {source.name: source.read_bytes()}, suite)
    result = judge(request, settings.cache_dir, config=config)
    wrong = [t.id for t in result.tests if t.verdict != "AC"]
    if wrong:
        raise SystemExit(f"not AC on {', '.join(wrong)}: the bench needs a correct program")
    tests = {t.id: {"seconds": t.seconds, "passed": True} for t in result.tests}
    total = refine_submission(request, tests, settings.cache_dir, config).total
    return total.statistic, (total.high - total.low) / 2


def with_hogs(count: int) -> list[subprocess.Popen[bytes]]:
    """`count` busy shells, in this process's cgroup (not the judge's timed one)."""
    return [subprocess.Popen(["sh", "-c", BUSY_LOOP]) for _ in range(count)]


def stop(hogs: list[subprocess.Popen[bytes]]) -> None:
    for hog in hogs:
        hog.kill()
        hog.wait()


def summary(totals: list[float]) -> tuple[float, float]:
    """The lower median and the spread (sd / mean)."""
    spread = statistics.stdev(totals) / statistics.fmean(totals) if len(totals) > 1 else 0.0
    return statistics.median_low(totals), spread


def tie_share(left: list[Figure], right: list[Figure], same: bool) -> str:
    """How many pairs the board ties (self_ties.verdict: app/scoreboard/ties.py's rule)."""
    pairs = list(itertools.combinations(left, 2)) if same else list(itertools.product(left, right))
    return f"{sum(verdict(a, b) == 'tied' for a, b in pairs)} of {len(pairs)}"


def run_rounds(source: Path, suite: str, rounds: int, hogs: int) -> dict[str, list[Figure]]:
    judged(source, suite)  # inputs prepared and the build's caches warm
    figures: dict[str, list[Figure]] = {"idle": [], "hog": []}
    for _ in range(rounds):
        figures["idle"].append(judged(source, suite))
        started = with_hogs(hogs)
        try:
            figures["hog"].append(judged(source, suite))
        finally:
            stop(started)
    return figures


def report(figures: dict[str, list[Figure]]) -> None:
    print(f"{'condition':<10}{'median s':>10}{'spread':>8}  refined totals (+- band at 95%)")
    for name, values in figures.items():
        median, spread = summary([total for total, _ in values])
        print(f"{name:<10}{median:>10.3f}{spread:>8.2%}  "
              + " ".join(f"{total:.3f}+-{band:.3f}" for total, band in values))
    gap = summary([t for t, _ in figures["hog"]])[0] / summary(
        [t for t, _ in figures["idle"]])[0] - 1
    print(f"beside the hog: {gap:+.2%}")
    idle, hog = figures["idle"], figures["hog"]
    print(f"ties by the board's rule: idle vs hog {tie_share(idle, hog, False)}, "
          f"idle vs idle {tie_share(idle, idle, True)}, hog vs hog {tie_share(hog, hog, True)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, nargs="?", default=DEFAULT_SOURCE)
    parser.add_argument("--suite", default="hw4-mini")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--hogs", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    figures = run_rounds(args.source, args.suite, args.rounds, args.hogs)
    print(f"{args.source} on {args.suite}, {args.rounds} rounds, {args.hogs} busy loop(s) as "
          f"the hog, load average {os.getloadavg()[0]:.1f} at the end")
    report(figures)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
