"""Sandbox start-up overhead: `true` run bare, in bubblewrap alone, and through worker.sandbox.

Prints a table of mean / median / p95 milliseconds. Usage: python bench/sandbox_startup.py [N]
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from worker.sandbox import Limits, Sandbox


def measure(fn: Callable[[], object], repeats: int) -> list[float]:
    fn()  # warm-up: page cache, first cgroup
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> int:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    sandbox = Sandbox()
    workdir = Path(tempfile.mkdtemp(prefix="fj-bench-", dir="/dev/shm"))
    bwrap = sandbox.report.bwrap or "bwrap"
    bare_bwrap = [bwrap, "--unshare-all", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib64",
                  "/lib64", "--symlink", "usr/lib", "/lib", "/usr/bin/true"]
    rows = {
        "subprocess true": lambda: subprocess.run(["true"], check=True),
        "bwrap true (no cgroup)": lambda: subprocess.run(bare_bwrap, check=True),
        "Sandbox.run true": lambda: sandbox.run(["true"], workdir=workdir,
                                                limits=Limits(wall_s=10)),
    }
    print(sandbox.report.summary())
    print(f"\n{'what':<26}{'mean ms':>10}{'median':>10}{'p95':>10}   (n={repeats})")
    for name, fn in rows.items():
        times = sorted(measure(fn, repeats))
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        print(f"{name:<26}{statistics.mean(times):>10.1f}{statistics.median(times):>10.1f}"
              f"{p95:>10.1f}")
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
