"""Judge overhead: how much of a judging is not the submission's own run time.

    python bench/judge_overhead.py SOURCE... [--language L] [--suite S] [--tests t01,t02]
                                   [--cache-dir DIR] [--repeat 2] [--insecure]
                                   [--cold-lock] [--preexec]

Judges the submission `--repeat` times (the first judging also fills the input cache and the tmpfs
copies; the last one is reported) and prints per test: the program's own run time (RunResult.wall_s:
from the sandbox being ready, one byte written just before the program's exec, to its exit), the
judge's overhead by phase (setup: work dir and copies; sandbox: everything around the program's own
time, the sandbox's start-up included; compare: output check and comparison; cleanup: what is left
on the critical path). The total line gives the overhead as a % of the summed run time: the honest
figure, with the sandbox's start-up counted as overhead, and for reference the figure without it
(start-up = the fastest RunResult.setup_s of an empty sandboxed program, `true`).
--cold-lock turns off the cgroup-lock warmer (worker/sandbox_warm.py) and --preexec the vfork
launch (worker/sandbox_launch.py), to measure what each saves.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from flashjudge.contract import JudgeResult
from testcases.prepared import default_cache_dir
from worker.languages import get_language, infer_language
from worker.pipeline import JudgeEvent, JudgeRequest, judge
from worker.sandbox.bwrap import BwrapSandbox, Limits, Sandbox
from worker.sandbox.workspace import make_workdir, remove_tree
from worker.settings import get_worker_settings


def sandbox_start_s(sandbox: Sandbox, samples: int = 7) -> float:
    """Fastest start-up (spawn to the program's exec) of `true` in the sandbox: what every run's
    overhead includes (the fastest, because the machine's noise only ever adds)."""
    times = []
    for _ in range(samples):
        work = make_workdir("bench")
        try:
            times.append(sandbox.run(["true"], workdir=work, limits=Limits(wall_s=10)).setup_s)
        finally:
            remove_tree(work)
    return min(times)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", type=Path)
    parser.add_argument("--language", default=None)
    parser.add_argument("--suite", default="hw4-mini")
    parser.add_argument("--tests", default=None, help="comma-separated ids (default: all)")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--insecure", action="store_true")
    parser.add_argument("--cold-lock", action="store_true", help="no cgroup-lock warmer")
    parser.add_argument("--preexec", action="store_true", help="fork with preexec_fn, no vfork")
    return parser.parse_args(argv)


PHASES = ("setup", "sandbox", "compare", "cleanup")  # TestResult.overhead_parts keys


def report(result: JudgeResult, start_s: float, judge_s: float, prepare_s: float,
           launch: str) -> None:
    print(f"{'test':<6}{'verdict':>8}{'run s':>10}{'overhead s':>12}{'overhead %':>12}"
          + "".join(f"{p + ' ms':>12}" for p in PHASES))
    for t in result.tests:
        share = 100 * t.overhead_s / t.wall_s if t.wall_s else 0.0
        parts = "".join(f"{1e3 * t.overhead_parts.get(p, 0.0):>12.1f}" for p in PHASES)
        print(f"{t.id:<6}{t.verdict!s:>8}{t.wall_s:>10.4f}{t.overhead_s:>12.4f}{share:>11.1f}%"
              + parts)
    run = sum(t.wall_s for t in result.tests)
    over = sum(t.overhead_s for t in result.tests)
    starts = start_s * len(result.tests)
    print(f"{'total':<6}{'':>8}{run:>10.4f}{over:>12.4f}{100 * over / run:>11.1f}%"
          "   <- overhead with the sandbox's start-up counted (the honest figure)")
    print(f"sandbox start-up (fastest setup_s of `true`): {start_s * 1e3:.1f} ms per run, "
          f"{starts:.3f} s in all; overhead without it: {100 * (over - starts) / run:.1f}% "
          f"of the summed program time ({run:.3f} s)")
    print(f"launch: {launch}")
    print(f"compile {result.compile.seconds:.3f} s, prepare (cache lookup) {prepare_s:.3f} s, "
          f"whole judging {judge_s:.3f} s, score {result.score}, passed {result.passed}",
          flush=True)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    files = {path.name: path.read_bytes() for path in args.sources}
    suite_name = args.suite
    tests = args.tests.split(",") if args.tests else None
    language = get_language(args.language or infer_language(files))
    config = get_worker_settings().judge_config(insecure=args.insecure)
    sandbox = BwrapSandbox.for_machine(config.machine, gpu=language.uses_gpu,
                                       insecure=args.insecure)
    if args.cold_lock:
        sandbox.warmer = None
    if args.preexec:
        sandbox.launcher = None
    request = JudgeRequest(language.name, files, suite_name, tests)
    cache = args.cache_dir or default_cache_dir()
    for attempt in range(args.repeat):
        marks: dict[str, float] = {}

        def on_event(event: JudgeEvent, marks: dict[str, float] = marks) -> None:
            marks.setdefault(event.kind, time.monotonic())

        started = time.monotonic()
        result = judge(request, cache, on_event, sandbox, config)
        judge_s = time.monotonic() - started
        prepare_s = marks.get("test-start", started) - marks.get("prepare", started)
        print(f"judging {attempt + 1}/{args.repeat}: {judge_s:.2f} s", flush=True)
    launch = sandbox.launcher.describe() if sandbox.launcher else "preexec_fn (fork)"
    launch += "; cgroup lock " + ("kept warm" if sandbox.warmer else "cold")
    report(result, sandbox_start_s(sandbox), judge_s, prepare_s, launch)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
