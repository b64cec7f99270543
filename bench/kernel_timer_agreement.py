"""How close the split timer's figure for an honest kernel is to the in-process harness's.

Judges one cuda-kernel source on a few hw4 tests twice: through the pipeline as it runs today (the
in-process harness, CUDA events) and through the split timing pair (worker/harness/split_run.py).
Prints a table: test, in-process mean, pair figure and where it came from, ratio, flags; then the
pair's calibrated overhead per test shape (fixed per batch, per call: the timer's round trip of one
call's turn). Needs an NVIDIA GPU (and the gpu extra for the reference outputs).

    .venv/bin/python bench/kernel_timer_agreement.py [--source FILE] [--tests t05,t08,t20]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from testcases.prepared import default_cache_dir, prepare_suite
from testcases.suite import load_suite
from worker.harness.build import find_toolchain
from worker.harness.split_run import SplitTimer, run_split_kernel_test
from worker.languages import BuildSettings, get_language
from worker.languages.arch import gpu_arch, supported_archs
from worker.languages.cuda_kernel import FRESH_SEED_OFFSET
from worker.machine import Machine
from worker.pipeline import JudgeRequest, judge
from worker.running.build import build
from worker.running.testrun import RunContext
from worker.sandbox.bwrap import BwrapSandbox, Sandbox
from worker.sandbox.workspace import InputCache
from worker.settings import get_worker_settings

HONEST = Path(__file__).resolve().parents[1] / "tests/hostile/forgers/memory-timings-twin/solve.cu"


def split_figure(source: bytes, test_id: str, cache: Path, split: SplitTimer,
                 sandbox: Sandbox, machine: Machine) -> tuple[float | None, str, str]:
    """(figure, source of the figure, flags) of one test through the pair."""
    suite = load_suite("hw4")
    spec = suite.test(test_id)
    first = prepare_suite(suite, cache, "auto", tests=[test_id])[test_id]
    fresh = prepare_suite(suite, cache, "auto", spec.seed + FRESH_SEED_OFFSET,
                          tests=[test_id])[test_id]
    with tempfile.TemporaryDirectory() as artifacts:
        settings = BuildSettings(gpu_arch=gpu_arch(machine), supported_archs=supported_archs())
        product = build(get_language("cuda-kernel"), {"solve.cu": source}, settings, sandbox,
                        Path(artifacts)).product
        if product is None:
            raise SystemExit("the source does not build")
        ctx = RunContext(sandbox=sandbox, product=product, inputs=InputCache(),
                         tolerance=suite.tolerance, machine=machine,
                         env={"LD_LIBRARY_PATH": str(find_toolchain(machine.cuda_home).lib_dir)})
        result, timing = run_split_kernel_test(ctx, first, fresh, split)
    if timing is None:
        return None, str(result.verdict), result.message
    return timing.ranked_s, timing.source, ", ".join(f.code for f in timing.flags) or "-"


def overhead_table(split: SplitTimer) -> Table:
    """This worker's calibrated overhead of the pair, per test shape (what verify.py allows)."""
    table = Table("shape B x N x d", "fixed ms", "per call us", "noise ms", "L2 flush ms")
    for (b, n, d), cal in sorted(split.calibrations.items()):
        table.add_row(f"{b} x {n} x {d}", f"{cal.fixed_s * 1e3:.3f}",
                      f"{cal.per_call_s * 1e6:.1f}", f"{cal.noise_s * 1e3:.3f}",
                      f"{cal.flush_ms:.3f}")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=HONEST)
    parser.add_argument("--tests", default="t05,t08,t20")
    args = parser.parse_args()
    # the pipeline's own figure is the in-process harness's (a worker's default is the pair)
    config = get_worker_settings().judge_config(kernel_timer="in-process")
    machine = config.machine
    source, cache = args.source.read_bytes(), default_cache_dir()
    sandbox = BwrapSandbox.for_machine(machine, gpu=True)
    split = SplitTimer.build(cache, gpu_arch(machine), find_toolchain(machine.cuda_home))
    table = Table("test", "in-process ms", "pair ms", "from", "ratio", "flags")
    for test_id in args.tests.split(","):
        old = judge(JudgeRequest("cuda-kernel", {"solve.cu": source}, "hw4", [test_id]),
                    cache, config=config).tests[0]
        new, where, flags = split_figure(source, test_id, cache, split, sandbox, machine)
        old_s = old.timing.mean_s if old.timing else None
        ratio = f"{new / old_s:.3f}" if new and old_s else "-"
        table.add_row(test_id, f"{old_s * 1e3:.4f}" if old_s else str(old.verdict),
                      f"{new * 1e3:.4f}" if new else "-", where, ratio, flags)
    Console().print(table)
    Console().print(overhead_table(split))


if __name__ == "__main__":
    main()
