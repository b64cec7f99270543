"""The CPU track beside a CPU hog: the same C program judged with the machine idle and with a busy
loop per core started beside the judge (as another service or a student's shell would), rounds
interleaved so drift hits both alike.

    python bench/cpu_neighbour_check.py [SOURCE] [--suite hw4-mini] [--rounds 6] [--hogs N]

Each judging goes through `judge()` with the worker's own configuration (the sandbox, the timed
runs' cgroup with the highest CPU weight, worker/sandbox/cgroup_layout.py). Prints each
condition's totals (the sum of the tests' seconds, what the board ranks), their median, spread
(sd / mean) and the gap between the medians: the figure should not move with the hog, and the
same program from two students (one judged idle, one beside the hog) should be a tie.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from worker.pipeline import JudgeRequest, judge
from worker.settings import get_worker_settings

DEFAULT_SOURCE = Path(__file__).resolve().parent.parent / "tests/hostile/correct-seq/hw4.c"
BUSY_LOOP = "while :; do :; done"


def judged_total(source: Path, suite: str) -> float:
    """One whole judging's total: what the board ranks (every test AC, or the bench stops)."""
    settings = get_worker_settings()
    request = JudgeRequest("c-program", {source.name: source.read_bytes()}, suite)
    result = judge(request, settings.cache_dir, config=settings.judge_config())
    wrong = [t.id for t in result.tests if t.verdict != "AC"]
    if wrong:
        raise SystemExit(f"not AC on {', '.join(wrong)}: the bench needs a correct program")
    return sum(t.seconds for t in result.tests)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, nargs="?", default=DEFAULT_SOURCE)
    parser.add_argument("--suite", default="hw4-mini")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--hogs", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    judged_total(args.source, args.suite)  # inputs prepared and the build's caches warm
    totals: dict[str, list[float]] = {"idle": [], "hog": []}
    for _ in range(args.rounds):
        totals["idle"].append(judged_total(args.source, args.suite))
        hogs = with_hogs(args.hogs)
        try:
            totals["hog"].append(judged_total(args.source, args.suite))
        finally:
            stop(hogs)
    load = os.getloadavg()[0]
    print(f"{args.source} on {args.suite}, {args.rounds} rounds, {args.hogs} busy loop(s) as "
          f"the hog, load average {load:.1f} at the end")
    print(f"{'condition':<10}{'median s':>10}{'spread':>8}  totals")
    for name, values in totals.items():
        median, spread = summary(values)
        print(f"{name:<10}{median:>10.3f}{spread:>8.2%}  "
              + " ".join(f"{v:.3f}" for v in values))
    gap = summary(totals["hog"])[0] / summary(totals["idle"])[0] - 1
    print(f"beside the hog: {gap:+.2%}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
