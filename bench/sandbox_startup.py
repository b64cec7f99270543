"""Sandbox start-up overhead: `true` run bare, in bubblewrap alone, and through the Sandbox.

Prints a table of mean / median / p95 milliseconds.

    python bench/sandbox_startup.py [N] [--ballast-gb G] [--gap-ms 300] [--gpu]

--ballast-gb allocates and touches G GB of numpy arrays first, so that this process has an address
space like the judge's on a GPU node (CuPy, CUDA contexts): that is what makes fork() slow, and
what a vfork()/posix_spawn() launch does not pay for.

--gap-ms leaves that long between two sandboxed runs, as a judging does (a test takes a few hundred
ms): a run that joins its cgroup after the kernel's cgroup-migration lock fell idle waits for an
RCU grace period (10-30 ms), which back-to-back runs never see. Rows: the vfork launch with the
lock kept warm (worker/sandbox_warm.py, the default), without it, and the old preexec_fn launch.
--gpu binds the GPU's device nodes as a GPU submission's runs do.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from worker.sandbox.bwrap import BwrapSandbox, Limits, Sandbox
from worker.settings import get_worker_settings


def measure(fn: Callable[[], object], repeats: int) -> list[float]:
    fn()  # warm-up: page cache, first cgroup
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def measure_runs(sandbox: Sandbox, workdir: Path, repeats: int,
                 gap_s: float) -> dict[str, list[float]]:
    """Sandbox.run of `true`, split: the whole call, its start-up (RunResult.setup_s, spawn to
    the ready byte before exec), the program's own time (wall_s) and the rest (cgroup, kill)."""
    rows: dict[str, list[float]] = {"whole call": [], "start-up (setup_s)": [],
                                    "program (wall_s)": [], "rest of the call": []}
    sandbox.run(["true"], workdir=workdir, limits=Limits(wall_s=10))
    for _ in range(repeats):
        time.sleep(gap_s)
        start = time.perf_counter()
        run = sandbox.run(["true"], workdir=workdir, limits=Limits(wall_s=10))
        whole = time.perf_counter() - start
        for key, seconds in zip(rows, (whole, run.setup_s, run.wall_s,
                                       whole - run.setup_s - run.wall_s), strict=True):
            rows[key].append(seconds * 1000)
    return rows


def print_row(name: str, times: list[float]) -> None:
    times = sorted(times)
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    print(f"{name:<44}{statistics.mean(times):>10.2f}{statistics.median(times):>10.2f}"
          f"{p95:>10.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repeats", nargs="?", type=int, default=20)
    parser.add_argument("--ballast-gb", type=float, default=0.0)
    parser.add_argument("--gap-ms", type=float, default=300.0)
    parser.add_argument("--gpu", action="store_true", help="bind the GPU device nodes")
    args = parser.parse_args()
    repeats = args.repeats
    ballast = np.ones(int(args.ballast_gb * (1 << 30)) // 8)  # touched: resident, mapped
    sandbox = BwrapSandbox.for_machine(get_worker_settings().machine(), gpu=args.gpu)
    workdir = Path(tempfile.mkdtemp(prefix="fj-bench-", dir="/dev/shm"))
    bwrap = sandbox.report.bwrap or "bwrap"
    bare_bwrap = [bwrap, "--unshare-all", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib64",
                  "/lib64", "--symlink", "usr/lib", "/lib", "/usr/bin/true"]
    rows = {
        "subprocess true": lambda: subprocess.run(["true"], check=True),
        "bwrap true (no cgroup)": lambda: subprocess.run(bare_bwrap, check=True),
    }
    print(sandbox.report.summary())
    print(f"ballast: {ballast.nbytes / 2**30:.1f} GiB resident in this process")
    print(f"\n{'what':<44}{'mean ms':>10}{'median':>10}{'p95':>10}   (n={repeats})")
    for name, fn in rows.items():
        print_row(name, measure(fn, repeats))
    launcher, warmer = sandbox.launcher, sandbox.warmer
    ways = {"vfork + warm lock": (launcher, warmer), "vfork, cold lock": (launcher, None),
            "preexec_fn (fork), cold": (None, None)}
    for label, (chosen, warm) in ways.items():
        if launcher is None and chosen is None and label != "preexec_fn (fork), cold":
            continue
        sandbox.launcher, sandbox.warmer = chosen, warm
        for name, times in measure_runs(sandbox, workdir, repeats, args.gap_ms / 1e3).items():
            print_row(f"{label}: {name}", times)
    sandbox.launcher, sandbox.warmer = launcher, warmer
    print(f"launch: {launcher.describe() if launcher else 'preexec_fn (helpers missing)'}; "
          f"{args.gap_ms:g} ms between runs")
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
