"""Where the Triton runner's slow calls come from: its own timed call, outside the judge.

Runs the runner's `Timing.call` (worker/harness/triton_runner.py: L2 flush, events around solve(),
the device-wide wait, less the calibrated end of a call) on one hw4 test's shape, many calls in a
row, under conditions interleaved in blocks: the census's profiler off or on, and a flush of 2x or
4x the L2. Per condition one row: calls, mean, median, std, the slowest call, the "slow" calls
(over median + 20 us), how many of those had a garbage collection start inside them
(gc.callbacks), and the host's time from the start of a call to solve()'s return (median over all
calls and over the slow ones): when the slow calls are those whose launch outlasted the flush,
the GPU waited for the host between the start event and the kernel. Before and after, five
readings of triton.testing.do_bench on the same tensors: its own spread from run to run.

    python3 bench/triton_runner_noise.py [--test t05] [--calls 1500] [--rounds 2] [--source F]

Needs an NVIDIA GPU and a Python with torch and triton (no sandbox, no timer process).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from pathlib import Path
from typing import Any

from triton_check import HONEST, load_solve  # bench/ siblings import by file name

from testcases.suite import load_suite
from worker.harness import triton_runner

SLOW_US = 20.0


class Call:
    """One timed call: its figure, whether a collection started in it, the host's enqueue time."""

    def __init__(self, ms: float, collected: bool, host_us: float) -> None:
        self.ms, self.collected, self.host_us = ms, collected, host_us


def run_block(timing: Any, solve: Any, tensors: tuple[Any, ...], shape: tuple[int, ...],
              calls: int) -> list[Call]:
    collections: list[int] = []
    returned: list[float] = []

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    def timed_solve(*args: Any) -> None:
        solve(*args)
        returned.append(time.perf_counter())

    gc.callbacks.append(on_gc)
    out: list[Call] = []
    try:
        for i in range(calls):
            before, began = len(collections), time.perf_counter()
            ms = timing.call(timed_solve, tensors, shape, i)
            out.append(Call(ms, len(collections) > before, (returned[-1] - began) * 1e6))
    finally:
        gc.callbacks.remove(on_gc)
    return out


def summary(label: str, calls: list[Call]) -> str:
    times = [c.ms for c in calls]
    med = statistics.median(times)
    slow = [c for c in calls if (c.ms - med) * 1e3 > SLOW_US]
    host_slow = statistics.median([c.host_us for c in slow]) if slow else float("nan")
    return (f"{label:<20} {len(times):>6} {statistics.fmean(times):9.4f} {med:9.4f} "
            f"{statistics.pstdev(times) * 1e3:7.1f} {max(times):8.3f} {len(slow):>5} "
            f"{sum(c.collected for c in slow):>4} "
            f"{statistics.median(c.host_us for c in calls):8.1f} {host_slow:8.1f}")


def do_bench_readings(solve: Any, tensors: tuple[Any, ...], shape: tuple[int, ...]) -> str:
    import triton.testing
    return " ".join(f"{triton.testing.do_bench(lambda: solve(*tensors, *shape)):.4f}"
                    for _ in range(5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test", default="t05")
    parser.add_argument("--calls", type=int, default=1500, help="per condition and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--source", type=Path, default=HONEST)
    args = parser.parse_args()
    import torch
    spec = next(t for t in load_suite("hw4").tests if t.id == args.test)
    shape = (spec.B, spec.N, spec.d)
    tensors = tuple(torch.randn(shape, device="cuda") for _ in range(3)) + \
        (torch.empty(shape, device="cuda"),)
    timings = {times: triton_runner.Timing(torch, times) for times in (2, 4)}
    solve = load_solve(args.source)
    solve(*tensors, *shape)
    torch.cuda.synchronize()
    before = do_bench_readings(solve, tensors, shape)
    print(f"{args.test} {shape}; end of call taken off: "
          + ", ".join(f"{t}x flush {x.tail_ms * 1e3:.1f} us" for t, x in timings.items()))
    print(f"{'condition':<20} {'calls':>6} {'mean ms':>9} {'median':>9} {'std us':>7} "
          f"{'max ms':>8} {'slow':>5} {'gc':>4} {'host us':>8} {'slow':>8}")
    results: dict[str, list[Call]] = {}
    for _ in range(args.rounds):
        for census in (False, True):
            prof = triton_runner.start_census(torch) if census else None
            for times, timing in timings.items():
                label = f"census {'on' if census else 'off'}, {times}x L2"
                results.setdefault(label, []).extend(
                    run_block(timing, solve, tensors, shape, args.calls))
            if prof is not None:
                prof.stop()
    for label, calls in results.items():
        print(summary(label, calls))
    print(f"do_bench ms, before: {before}; after: {do_bench_readings(solve, tensors, shape)}")


if __name__ == "__main__":
    main()
