"""Timing fidelity: judge one submission N times, refine each judging's timing, print the spread.

    python bench/timing_fidelity.py SOURCE... [--language L] [--suite hw4-mini] [--judgings 3]
                                    [--tests t01,t02] [--cache-dir DIR] [--extra 0.5]
                                    [--json FILE] [--insecure]

Each judging is what the worker would do: the verdict pass (judge(), one run per test), then the
refinement (worker.timing.policy.refine) within `--extra` times the verdict pass's device time.
The refinement builds the program once and runs the tests it picks again, as the worker's
refinement task does (worker/pipeline.py test_runner).

Per test the table gives: runs per judging, the verdict pass's spread over the N judgings (one run:
what ranks today), the refined statistic's mean and spread, the band's mean half-width (z * SE as a
% of the statistic) and the stop reasons. Then the same for the total, and the device (GPU, or CPU
on the CPU track) seconds per judging against one pass. Spread = sample std / mean over judgings.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from testcases.prepared import default_cache_dir
from worker.languages import get_language, infer_language
from worker.pipeline import JudgeConfig, JudgeRequest, judge, test_runner
from worker.sandbox.bwrap import BwrapSandbox, Sandbox
from worker.settings import get_worker_settings
from worker.timing.gpustate import GpuMonitor
from worker.timing.policy import PolicyConfig, refine
from worker.timing.report import TimingReport
from worker.timing.result_samples import (
    GpuEventRecorder,
    TestOutcome,
    first_pass_samples,
    sample_from_result,
)
from worker.timing.sample import gpu_sampled
from worker.timing.stats import noise_for


@dataclasses.dataclass
class Judged:
    """One judging of the submission: its timing and what it cost."""

    report: TimingReport  # the refined timing (its first samples are the verdict pass)
    verdict_wall_s: float  # wall time of the verdict pass (judge() of every test)
    refine_wall_s: float  # wall time of the refinement (rebuilds included, see the docstring)


@dataclasses.dataclass
class Bench:
    """What every judging shares."""

    request: JudgeRequest  # the submission and its suite
    cache: Path  # the prepared cache
    sandbox: Sandbox  # one sandbox for every judge() call
    config: JudgeConfig  # worker settings
    monitor: GpuMonitor | None  # NVML (None here: the CPU track)
    policy: PolicyConfig  # the refinement's limits

    def judging(self) -> Judged:
        recorder = GpuEventRecorder(self.monitor)
        started = time.monotonic()
        result = judge(self.request, self.cache, recorder, self.sandbox, self.config)
        verdict_s = time.monotonic() - started
        if result.system_error:
            raise SystemExit(f"system error while judging: {result.system_error}")
        with test_runner(self.request, self.cache, self.sandbox, self.config) as run_test:
            runner = gpu_sampled(lambda test_id: sample_from_result(run_test(test_id)),
                                 self.monitor)
            tests: list[TestOutcome] = list(result.tests)  # the parameter is a list, invariant
            report = refine(first_pass_samples(tests, recorder), runner, self.policy)
        return Judged(report, verdict_s, time.monotonic() - started - verdict_s)


def spread(values: Sequence[float]) -> float | None:
    """Sample std / mean (None with fewer than two values or a zero mean)."""
    if len(values) < 2 or statistics.mean(values) == 0:
        return None
    return statistics.stdev(values) / statistics.mean(values)


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


HEADER = (f"{'test':<7}{'runs':>10}{'1-run mean':>12}{'1-run spread':>14}{'stat mean':>11}"
          f"{'stat spread':>13}{'band +-':>9}  stop")


def test_row(test_id: str, judged: list[Judged], z: float) -> str:
    timings = [j.report.test(test_id) for j in judged]
    first = [t.samples[0].seconds for t in timings]
    stats = [t.estimate.statistic for t in timings]
    band = statistics.mean(t.estimate.rse for t in timings) * z
    runs = ",".join(str(len(t.samples)) for t in timings)
    stops = ",".join(sorted({str(t.stop) for t in timings}))
    flagged = " flagged" if any(t.flagged for t in timings) else ""
    return (f"{test_id:<7}{runs:>10}{statistics.mean(first):>12.4f}{pct(spread(first)):>14}"
            f"{statistics.mean(stats):>11.4f}{pct(spread(stats)):>13}{pct(band):>9}  "
            f"{stops}{flagged}")


def print_table(judged: list[Judged], z: float) -> None:
    print(HEADER)
    for timing in judged[0].report.tests:
        print(test_row(timing.id, judged, z))
    firsts = [sum(t.samples[0].seconds for t in j.report.tests) for j in judged]
    totals = [j.report.total.statistic for j in judged]
    band = statistics.mean(j.report.total.rse for j in judged) * z
    runs = statistics.mean(sum(len(t.samples) for t in j.report.tests) for j in judged)
    print(f"{'total':<7}{runs:>10.1f}{statistics.mean(firsts):>12.4f}{pct(spread(firsts)):>14}"
          f"{statistics.mean(totals):>11.4f}{pct(spread(totals)):>13}{pct(band):>9}")
    for index, j in enumerate(judged, 1):
        r = j.report
        print(f"judging {index}: device s {r.first_pass_s:.3f} + {r.spent_s:.3f} "
              f"(budget {r.budget_s:.3f}) = {r.cost_ratio:.2f}x one pass, {r.runs} extra runs, "
              f"{r.stopped}; wall s {j.verdict_wall_s:.1f} + {j.refine_wall_s:.1f}")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", type=Path)
    parser.add_argument("--language", default=None)
    parser.add_argument("--suite", default="hw4-mini")
    parser.add_argument("--tests", default=None, help="comma-separated ids (default: all)")
    parser.add_argument("--judgings", type=int, default=3)
    parser.add_argument("--extra", type=float, default=0.5, help="refinement budget / one pass")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write every TimingReport here")
    parser.add_argument("--insecure", action="store_true")
    return parser.parse_args(argv)


def make_bench(args: argparse.Namespace, monitor: GpuMonitor | None) -> Bench:
    files = {path.name: path.read_bytes() for path in args.sources}
    language = get_language(args.language or infer_language(files))
    config = get_worker_settings().judge_config(insecure=args.insecure)
    sandbox = BwrapSandbox.for_machine(config.machine, gpu=language.uses_gpu,
                                       insecure=args.insecure)
    tests = args.tests.split(",") if args.tests else None
    return Bench(JudgeRequest(language.name, files, args.suite, tests),
                 args.cache_dir or default_cache_dir(), sandbox, config, monitor,
                 PolicyConfig(extra_share=args.extra, noise=noise_for(language.facts)))


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    monitor = GpuMonitor.of(get_worker_settings().machine())
    print(f"GPU state: {'NVML' if monitor else 'none (no NVML: the CPU track)'}", flush=True)
    bench = make_bench(args, monitor)
    judged = []
    for index in range(args.judgings):
        judged.append(bench.judging())
        print(f"judging {index + 1}/{args.judgings} done: total "
              f"{judged[-1].report.total.statistic:.4f} s", flush=True)
    print_table(judged, bench.policy.noise.z)
    if args.json:
        args.json.write_text(json.dumps([j.report.to_dict() for j in judged], indent=1))
    if monitor is not None:
        monitor.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
