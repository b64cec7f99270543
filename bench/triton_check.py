"""A Triton FlashAttention kernel judged on hw4 as a worker judges it, next to do_bench.

Judges one triton-kernel source through the pipeline (build, the split timer with the Python
runner, the borrowed-kernel census) and, in this process, times the same solve() on each test's
input with triton.testing.do_bench (L2 flushed before every call, mean). Prints one row per test as
it finishes (verdict, the judge's figure and its source, do_bench's, their ratio, the JIT's time,
flags), then the spread of the ratios. Needs an NVIDIA GPU, nvcc and a Python with torch and triton.

    python3 bench/triton_check.py [--source FILE] [--tests t01-t30] [--budget 1.0] [--json OUT]
        [--repeat N] [--rule on|off]

--repeat judges the tests N times in a row: the judge's run-to-run spread (some judgements sample
to their budget with a wide spread, docs/benchmarks.md); each row shows its timed calls and their
standard deviation. --rule off judges as a suite without the borrowed-kernel rule would: no BK
check, hence no census profiler in the runner (what the census costs the figures).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from flashjudge.contract import TestResult
from testcases.prepared import default_cache_dir, prepare_suite
from testcases.suite import Suite, load_suite
from worker.pipeline import JudgeEvent, JudgeRequest, judge
from worker.settings import get_worker_settings

HONEST = Path(__file__).resolve().parents[1] / "tests/hostile/triton/honest/solve.py"


def load_solve(source: Path) -> Any:
    spec = importlib.util.spec_from_file_location("student_solve", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.solve


def do_bench_ms(solve: Any, input_path: Path) -> float:
    """triton.testing.do_bench's mean (L2 flushed before each call) on the test's input."""
    import numpy as np
    import torch
    import triton.testing

    from kernels.fileformat import open_input
    data = open_input(input_path)
    b, n, d = data.header.B, data.header.N, data.header.d
    qkv = torch.from_numpy(np.ascontiguousarray(data.data)).cuda()
    q, k, v = (qkv[:, i].contiguous() for i in range(3))
    o = torch.empty_like(q)
    return float(triton.testing.do_bench(lambda: solve(q, k, v, o, b, n, d)))


def test_ids(spec: str, all_ids: list[str]) -> list[str]:
    """"t01-t30" or "t05,t08" into ids, in suite order."""
    if "-" in spec:
        lo, hi = spec.split("-")
        return all_ids[all_ids.index(lo):all_ids.index(hi) + 1]
    return [t for t in all_ids if t in spec.split(",")]


def row(result: TestResult, bench_ms: float | None) -> dict[str, Any]:
    jit = re.findall(r"compile and autotune ([0-9.]+) s", result.message)
    figure = result.timing.mean_s * 1e3 if result.timing else None
    timing = result.timing
    return {"test": result.id, "verdict": str(result.verdict), "judge_ms": figure,
            "runs": timing.runs if timing else 0,
            "std_us": timing.std_s * 1e6 if timing else None,
            "source": result.timing_source, "do_bench_ms": bench_ms,
            "ratio": figure / bench_ms if figure and bench_ms else None,
            "jit_s": float(jit[-1]) if jit else None,
            "flags": ",".join(f["code"] for f in result.timing_flags) or "-",
            "message": result.message[:160]}


def show(r: dict[str, Any]) -> None:
    def fmt(x: float | None, spec: str) -> str:
        return "-" if x is None else format(x, spec)
    print(f"{r['test']:>4} {r['verdict']:>3} {fmt(r['judge_ms'], '9.4f')} {r['source']:>7} "
          f"{fmt(r['do_bench_ms'], '9.4f')} {fmt(r['ratio'], '6.3f')} {r['runs']:>5} "
          f"{fmt(r['std_us'], '7.1f')} {fmt(r['jit_s'], '5.2f')} {r['flags']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=HONEST)
    parser.add_argument("--tests", default="t01-t30")
    parser.add_argument("--budget", type=float, default=1.0, help="timed seconds per test")
    parser.add_argument("--json", type=Path, help="write the rows here too")
    parser.add_argument("--repeat", type=int, default=1, help="judge the tests this many times")
    parser.add_argument("--rule", choices=("on", "off"), default="on",
                        help="the borrowed-kernel rule (off: no census in the runner)")
    args = parser.parse_args()
    suite = replace(load_suite("hw4"), own_kernels_only=args.rule == "on")
    ids = test_ids(args.tests, [t.id for t in suite.tests])
    cache = default_cache_dir()
    prepared = prepare_suite(suite, cache, "auto", tests=ids)
    solve = load_solve(args.source)
    rows: list[dict[str, Any]] = []
    print(" test  v  judge_ms  source  bench_ms  ratio  runs  std_us   jit flags", flush=True)

    def on_event(event: JudgeEvent) -> None:
        if event.kind == "test-done" and isinstance(event.result, TestResult):
            r = row(event.result, do_bench_ms(solve, Path(prepared[event.result.id].input_path)))
            rows.append(r)
            show(r)
            if args.json:
                args.json.write_text(json.dumps(rows, indent=1))

    for _ in range(args.repeat):
        judge_once(args, suite, ids, cache, on_event)
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    print(f"{len(rows)} rows; judge/do_bench: "
          + (f"median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, "
             f"max {max(ratios):.3f}" if ratios else "none"), flush=True)


def judge_once(args: argparse.Namespace, suite: Suite, ids: list[str], cache: Path,
               on_event: Any) -> None:
    """One judging of the source on the tests, as a worker would judge it."""
    started = time.monotonic()
    config = get_worker_settings().judge_config(kernel_budget_s=args.budget, suite=suite)
    result = judge(JudgeRequest("triton-kernel", {"solve.py": args.source.read_bytes()}, "hw4",
                                ids), cache, on_event=on_event, config=config)
    print(f"verdict {result.verdict}, {result.passed}/{len(ids)} AC, score {result.score}, "
          f"{time.monotonic() - started:.0f} s", flush=True)
    if not result.compile.ok:
        print(result.compile.log, file=sys.stderr)


if __name__ == "__main__":
    main()
