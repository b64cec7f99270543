"""Where a whole program's time noise comes from: the same built hw4 run many times per condition.

    python bench/program_noise.py SOURCE [--language cuda-program] [--suite hw4]
                                  [--tests t01,t11,t12,t22] [--runs 10] [--cache-dir DIR]

Conditions, interleaved run by run so that drift of the machine hits each alike:
  bare        the program run directly (no sandbox), input and output on /dev/shm, wall time of
              the child process; the output removed before the next run
  judge       the judge's path (worker/languages: sandbox, cgroup, timing from the ready byte),
              the last test's work dir removed on the background cleaner while the next one runs
  judge-sync  the judge's path with the work dir removed before the next run starts
  bare-pinned as bare, the program pinned to the upper half of the machine's CPUs (the worker,
              its cleaner and the kernel's housekeeping keep the lower half)
Per test and condition: median seconds, the spread (sample std / mean) and the worst run over the
median, so a change to how runs are made can be judged on numbers. Needs the GPU for CUDA
languages; the c-program on hw4-mini runs anywhere.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from testcases.prepared import PreparedTest, default_cache_dir, prepare_suite
from testcases.suite import load_suite
from worker.languages import BuildSettings, Language, get_language, infer_language
from worker.languages.arch import gpu_arch, supported_archs
from worker.machine import Machine
from worker.running.build import build
from worker.running.testrun import RunContext, TestInputs
from worker.sandbox.bwrap import BwrapSandbox, Sandbox
from worker.sandbox.workspace import Cleaner, InputCache
from worker.settings import get_worker_settings

CONDITIONS = ("bare", "judge", "judge-sync", "bare-pinned")


def built(language: Language, files: dict[str, bytes], sandbox: Sandbox, out: Path,
          machine: Machine) -> Path:
    arch = gpu_arch(machine) if language.uses_gpu else ""
    archs = supported_archs() if arch else frozenset()
    settings = BuildSettings(gpu_arch=arch, supported_archs=archs)
    outcome = build(language, files, settings, sandbox, out)
    if outcome.product is None:
        raise SystemExit(f"does not build:\n{outcome.compile.log}")
    return outcome.product


def upper_half() -> set[int]:
    cpus = sorted(os.sched_getaffinity(0))
    return set(cpus[len(cpus) // 2:]) or set(cpus)


def bare_run(product: Path, test: PreparedTest, inputs: InputCache, scratch: Path,
             cpus: set[int] | None = None) -> float:
    output = scratch / "out.bin"
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    started = time.perf_counter()
    subprocess.run([str(product), str(inputs.path_for(Path(test.input_path))), str(output)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   preexec_fn=pin)
    seconds = time.perf_counter() - started
    output.unlink()
    return seconds


def judge_runner(language: Language, ctx: RunContext) -> Callable[[PreparedTest], float]:
    def run(test: PreparedTest) -> float:
        result = language.run_test(ctx, TestInputs(test))
        if str(result.verdict) != "AC":
            raise SystemExit(f"{test.spec.id}: {result.verdict} {result.message}")
        return float(result.seconds)
    return run


def summary(times: list[float]) -> str:
    median = statistics.median(times)
    spread = statistics.stdev(times) / statistics.mean(times) if len(times) > 1 else 0.0
    return f"{median:9.4f} {100 * spread:6.2f}% {100 * (max(times) / median - 1):6.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("--language", default=None)
    parser.add_argument("--suite", default="hw4")
    parser.add_argument("--tests", default="t01,t11,t12,t22")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args()
    files = {args.source.name: args.source.read_bytes()}
    language = get_language(args.language or infer_language(files))
    machine = get_worker_settings().machine()
    sandbox = BwrapSandbox.for_machine(machine, gpu=language.uses_gpu)
    suite, cache = load_suite(args.suite), args.cache_dir or default_cache_dir()
    tests = prepare_suite(suite, cache, "auto", tests=args.tests.split(","))
    work = Path(tempfile.mkdtemp(prefix="noise-", dir="/dev/shm"))
    inputs, cleaner = InputCache(), Cleaner()
    product = built(language, files, sandbox, work, machine)
    contexts = {name: RunContext(sandbox=sandbox, product=product, inputs=inputs,
                                 tolerance=suite.tolerance, cleaner=drain, cache_dir=cache,
                                 machine=machine)
                for name, drain in (("judge", cleaner), ("judge-sync", None))}
    runners: dict[str, Callable[[PreparedTest], float]] = {
        "bare": lambda t: bare_run(product, t, inputs, work),
        "bare-pinned": lambda t: bare_run(product, t, inputs, work, upper_half()),
        **{name: judge_runner(language, ctx) for name, ctx in contexts.items()}}
    times: dict[tuple[str, str], list[float]] = {(t, c): [] for t in tests for c in CONDITIONS}
    for _ in range(args.runs):
        for tid, test in tests.items():
            for condition in CONDITIONS:
                times[(tid, condition)].append(runners[condition](test))
    print(f"{'test':<6}{'condition':<12}{'median s':>9} {'spread':>7} {'worst':>7}")
    for tid in tests:
        for condition in CONDITIONS:
            print(f"{tid:<6}{condition:<12}{summary(times[(tid, condition)])}")
    cleaner.drain()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
