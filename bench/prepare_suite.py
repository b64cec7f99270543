"""Time `prepare_suite` stage by stage and cross-check expected outputs against the CPU reference.

Prints, per test: seconds spent generating the input, computing the expected output and running the
trivial-answer guard, the guard's two errors, and (with --check t01,t11) the max abs difference
between the prepared expected output and the float64 CPU reference on the same input.

    python bench/prepare_suite.py --suite hw4 --device gpu --cache-dir /tmp/cache --check t01,t11
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kernels.compare import compare_files
from kernels.reference import compute_reference
from testcases.prepared import PreparedTest, PrepareEvent, prepare_suite
from testcases.suite import load_suite


class StageClock:
    """Turns PrepareEvents into seconds per (test, stage)."""

    def __init__(self) -> None:
        self.seconds: dict[str, dict[str, float]] = defaultdict(dict)
        self.current: tuple[str, str, float] | None = None

    def __call__(self, event: PrepareEvent) -> None:
        now = time.perf_counter()
        if self.current is not None:
            test_id, stage, start = self.current
            self.seconds[test_id][stage] = now - start
        self.current = None if event.stage == "done" else (event.test_id, event.stage, now)


def cpu_difference(test: PreparedTest) -> float | None:
    """Max |prepared expected - float64 CPU reference| on the test's input."""
    with tempfile.TemporaryDirectory() as tmp:
        cpu_out = Path(tmp) / "cpu.bin"
        compute_reference(test.input_path, cpu_out, "cpu")
        return compare_files(test.expected_path, cpu_out, tolerance=0.0).max_error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="hw4-mini")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--check", default="", help="tests to cross-check against the CPU")
    args = parser.parse_args()
    clock = StageClock()
    prepared = prepare_suite(load_suite(args.suite), args.cache_dir, args.device, progress=clock)
    checks = {t for t in args.check.split(",") if t}
    table = Table(title=f"prepare_suite {args.suite} --device {args.device}")
    for column in ("test", "shape", "reference", "input s", "expected s", "guard s",
                   "zeros err", "mean(V) err", "vs cpu f64"):  # fmt: skip
        table.add_column(column, justify="right")
    for test_id, test in prepared.items():
        s = clock.seconds[test_id]
        diff = cpu_difference(test) if test_id in checks else None
        guard = test.guard
        table.add_row(
            test_id, f"{test.spec.B}x{test.spec.N}x{test.spec.d}", test.reference,
            *(f"{s.get(k, 0.0):.2f}" for k in ("input", "expected", "guard")),
            f"{guard.zeros_error:.3g}" if guard else "-",
            f"{guard.mean_v_error:.3g}" if guard else "-",
            "-" if diff is None else f"{diff:.2e}",
        )  # fmt: skip
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
