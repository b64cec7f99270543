"""CPU time of the mistake catalogue (kernels/mistakes/) per failing test, on the
largest shapes of hw4 and hw4-mini: the budget is under 1 s of CPU per WA test.

The catalogue reads only the batches it samples (at most 4) and computes every variant whatever
it finds, so its cost depends on the shape, not on the mistake: each test gets sparse files of
its exact size (input, expected, output) with the judge's real inputs in the first batches and a
wrong output there (random values: nothing matches, every variant is tried). The first wrong
batch is given, as the judge gives it from the error map. Prints a table: test, shape, rows
compared, CPU seconds (process time, all threads) and wall seconds, best of --repeat.

    .venv/bin/python bench/mistake_catalogue.py [--suite hw4] [--tests t11,t12,t30] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from kernels.fileformat import HEADER_BYTES, InputHeader, write_header
from kernels.mistakes.files import mistake_of_files
from kernels.mistakes.sample import MAX_BATCHES, SCORE_BUDGET
from testcases.generator import batch_values
from testcases.suite import TestSpec, load_suite

BIGGEST = {"hw4": "t11,t12,t13,t20,t22,t24,t26,t28,t29,t30", "hw4-mini": "t05,t08,t09,t10"}


def sparse_files(folder: Path, spec: TestSpec) -> tuple[Path, Path, Path]:
    """(input, output, expected) of the test's exact sizes; only the first batches written."""
    header = InputHeader(spec.B, spec.N, spec.d)
    paths = folder / "input.bin", folder / "output.bin", folder / "expected.bin"
    with open(paths[0], "wb") as f:
        write_header(f, header)
        f.truncate(header.input_bytes)
    for path in paths[1:]:
        with open(path, "wb") as f:
            f.truncate(header.output_bytes)
    batches = min(MAX_BATCHES, spec.B)
    with open(paths[0], "r+b") as f:
        f.seek(HEADER_BYTES)
        for b in range(batches):
            f.write(batch_values(header, spec.seed, b).tobytes())
    rng = np.random.default_rng(0)
    with open(paths[1], "r+b") as f:
        f.write(rng.uniform(-3, 3, batches * spec.N * spec.d).astype(np.float32).tobytes())
    return paths


def timed(paths: tuple[Path, Path, Path], repeat: int) -> tuple[float, float, str]:
    """Best CPU and wall seconds of the catalogue on the files, and what it named."""
    best_cpu = best_wall = float("inf")
    named = ""
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        found = mistake_of_files(paths[0], paths[1], paths[2], first_batch=0)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
        named = found.name if found else "nothing"
    return best_cpu, best_wall, named


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="hw4", help="hw4 or hw4-mini")
    parser.add_argument("--tests", help="comma-separated test ids (default: the biggest)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per test (best kept)")
    args = parser.parse_args()
    suite = load_suite(args.suite)
    table = Table(title=f"mistake catalogue per failing test ({args.suite}, score budget "
                        f"{SCORE_BUDGET:,})")
    for column in ("test", "B x N x d", "rows", "CPU s", "wall s", "named"):
        table.add_column(column, justify="right")
    for test_id in (args.tests or BIGGEST.get(args.suite, "t01")).split(","):
        spec = suite.test(test_id)
        with tempfile.TemporaryDirectory(prefix="fj-mistakes-") as folder:
            cpu, wall, named = timed(sparse_files(Path(folder), spec), args.repeat)
        rows = min(spec.N, max(8, SCORE_BUDGET // (min(MAX_BATCHES, spec.B) * spec.N)))
        table.add_row(test_id, f"{spec.B} x {spec.N} x {spec.d}", str(rows), f"{cpu:.3f}",
                      f"{wall:.3f}", named)
    Console().print(table)


if __name__ == "__main__":
    main()
