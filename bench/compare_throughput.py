"""Throughput of kernels.compare.compare_files on files in the page cache.

Writes an expected output and a passing output (within the tolerance) of several sizes into a
temporary directory, reads each once to warm the page cache, then times compare_files. Prints a
table: size, seconds (best of 3), GB/s of output compared. Also times a failing comparison (0.1% of
values over the tolerance), which takes the slow path.

    .venv/bin/python bench/compare_throughput.py [--sizes-mb 16,256,1024]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from kernels.compare import compare_files


def write_pair(directory: Path, mb: int, failing: bool) -> tuple[Path, Path]:
    """An expected file of `mb` MB and an output close to it (a few far values if failing)."""
    n = mb * (1 << 20) // 4
    rng = np.random.default_rng(mb)
    want = rng.uniform(-1, 1, n).astype(np.float32)
    got = want + rng.uniform(-4e-3, 4e-3, n).astype(np.float32)
    if failing:
        got[:: max(1, n // 1000)] += 1.0
    expected, output = directory / f"want{mb}.bin", directory / f"got{mb}{failing}.bin"
    want.tofile(expected)
    got.tofile(output)
    return output, expected


def time_compare(output: Path, expected: Path, repeats: int = 3) -> tuple[float, bool]:
    """Best wall time of compare_files over `repeats` runs (after one warm-up read)."""
    for path in (output, expected):
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass
    best, ok = float("inf"), False
    for _ in range(repeats):
        t0 = time.perf_counter()
        ok = compare_files(output, expected).ok
        best = min(best, time.perf_counter() - t0)
    return best, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", default="16,256,1024")
    args = parser.parse_args()
    table = Table(title=f"compare_files throughput ({os.cpu_count()} CPUs, page cache warm)")
    for column in ("output size", "case", "seconds", "GB/s of output"):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        for mb in (int(s) for s in args.sizes_mb.split(",")):
            for failing in (False, True):
                output, expected = write_pair(Path(tmp), mb, failing)
                seconds, ok = time_compare(output, expected)
                case = "pass" if ok else "fail (0.1% over)"
                gbps = mb * (1 << 20) / seconds / 1e9
                table.add_row(f"{mb} MB", case, f"{seconds:.3f}", f"{gbps:.2f}")
                output.unlink()
            (Path(tmp) / f"want{mb}.bin").unlink()
    Console().print(table)


if __name__ == "__main__":
    main()
