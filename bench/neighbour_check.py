"""One program's figure on GPU 0 while the node's other GPUs are idle, start CUDA processes in a
loop, or run another program: through the judge's sandbox, with and without the driver gate.

    python3 bench/neighbour_check.py --program BIN --inputs t01.in[,t12.in] --probe BIN
                                     --injection LIB [--runs 10] [--out FILE.json]

Each row is `--runs` runs of the program on one input, its time as the judge takes it
(RunResult.wall_s: from the sandbox's ready line to the exit, less what the gate froze), with
the neighbours' loops (their own sandboxes, one per other GPU) going on meanwhile. Prints the
median, the spread (1.4826 MAD / median), min and max, the frozen waits, the census the judge's
injection wrote and the processes NVML saw, so the gate's effect and its cost read side by side.
Needs GPUs, bubblewrap (FLASHJUDGE_BWRAP) and nvidia-ml-py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worker.sandbox.bwrap import Bind, BwrapSandbox, GpuAccess, Limits, RunResult
from worker.sandbox.gpu.driver_gate import DriverGate
from worker.sandbox.gpu.driver_keeper import start_keeper, stop_keeper
from worker.sandbox.gpu.gpu_run import GpuRuntime

SHM = Path("/dev/shm")


@dataclass(frozen=True)
class Setup:
    """What a condition runs with."""

    gate: bool  # the driver gate on
    injection: bool  # the judge's CUDA injection (census, gate signals) on


def nvml_lister(index: int) -> Any:
    import pynvml
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)

    def pids() -> set[int]:
        return {p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)}
    return pids


def sandbox_for(gpu: int, setup: Setup, gate_dir: Path, injection: Path) -> BwrapSandbox:
    runtime = GpuRuntime(gate=DriverGate(gate_dir) if setup.gate else None,
                         injection=injection if setup.injection else None,
                         list_pids=nvml_lister(gpu))
    return BwrapSandbox(gpu=GpuAccess.for_visible_device(str(gpu)),
                        bwrap=os.environ.get("FLASHJUDGE_BWRAP"), gpu_runtime=runtime)


def run_program(sandbox: BwrapSandbox, program: Path, input_path: Path) -> RunResult:
    work = Path(tempfile.mkdtemp(prefix="fj-nb-", dir=SHM))
    try:
        shutil.copy(program, work / "hw4")
        return sandbox.run(["./hw4", "/in", "out"], workdir=work, binds=[Bind(input_path, "/in")],
                           limits=Limits(wall_s=30, memory_bytes=8 << 30, timed=True))
    finally:
        shutil.rmtree(work, ignore_errors=True)


class Neighbours:
    """Loops on GPUs 1..k, each running `argv` (a probe or a program) in its own sandbox."""

    def __init__(self, gpus: list[int], setup: Setup, gate_dir: Path, injection: Path,
                 program: Path, input_path: Path) -> None:
        self.stop = threading.Event()
        self.lives = 0
        self.threads = [threading.Thread(target=self.loop, daemon=True, args=(
            sandbox_for(g, setup, gate_dir, injection), program, input_path)) for g in gpus]

    def loop(self, sandbox: BwrapSandbox, program: Path, input_path: Path) -> None:
        while not self.stop.is_set():
            run_program(sandbox, program, input_path)
            self.lives += 1

    def __enter__(self) -> Neighbours:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join()


def row(label: str, runs: list[RunResult], lives: int) -> dict[str, Any]:
    times = [r.wall_s for r in runs]
    med = statistics.median(times)
    spread = 1.4826 * statistics.median(abs(t - med) for t in times) / med
    frozen_all = [r.gpu.gate.frozen_s for r in runs if r.gpu]
    frozen = statistics.median(frozen_all) if frozen_all else 0.0
    last = runs[-1].gpu
    out = {"label": label, "median": med, "spread": spread, "min": min(times), "max": max(times),
           "frozen": frozen, "lives": lives,
           "statuses": sorted({r.status.value for r in runs}),
           "census": last.census if last else [], "said": last.gate.said if last else [],
           "processes": [p.to_dict() for p in last.processes] if last else [],
           "others": [p.to_dict() for p in last.others()] if last else []}
    print(f"{label:44s} {med * 1e3:8.1f} ms  spread {spread * 100:4.1f}%  "
          f"min {min(times) * 1e3:7.1f}  max {max(times) * 1e3:7.1f}  "
          f"frozen {frozen * 1e3:6.1f}  lives {lives}", flush=True)
    return out


class Beside:
    """Something kept going beside the measured runs that uses no GPU of theirs: a busy loop on
    the last core, the kernel's PM QoS request for no idle latency (/dev/cpu_dma_latency = 0,
    held while the file is open), or an idle CUDA process on GPU 1 (context or cuInit only)."""

    def __init__(self, kind: str, probe: Path) -> None:
        self.kind, self.probe = kind, probe
        self.proc: subprocess.Popen[bytes] | None = None
        self.fd: int | None = None

    def __enter__(self) -> Beside:
        last = max(os.sched_getaffinity(0))
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="1")
        if self.kind == "cpu-spin":
            self.proc = subprocess.Popen(["taskset", "-c", str(last), "python3", "-c",
                                          "while True: pass"])
        elif self.kind == "no-idle-latency":
            self.fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
            os.write(self.fd, struct.pack("i", 0))
        elif self.kind in ("context", "cuinit"):
            upto = "kernel" if self.kind == "context" else "init"
            self.proc = subprocess.Popen([str(self.probe), "--upto", upto, "--hold-ms",
                                          "600000"], env=env, stdout=subprocess.DEVNULL)
            time.sleep(2.0)  # its start-up is over before the first measured run
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
        if self.fd is not None:
            os.close(self.fd)


def idle_factors(args: argparse.Namespace, gate_dir: Path) -> list[dict[str, Any]]:
    """The program alone on the node, with one thing beside it at a time."""
    rows = []
    for input_name in args.inputs.split(","):
        input_path = Path(input_name)
        for kind in ("nothing", "cpu-spin", "no-idle-latency", "context", "cuinit", "nothing"):
            sandbox = sandbox_for(0, Setup(True, True), gate_dir, args.injection)
            with Beside(kind, args.probe):
                runs = [run_program(sandbox, args.program, input_path) for _ in range(args.runs)]
            rows.append({**row(f"{input_path.stem}: alone, beside: {kind}", runs, 0),
                         "input": input_path.name})
    return rows


def generate(folder: Path, tests: list[str]) -> dict[str, Path]:
    """hw4's inputs of `tests`, generated from their seeds (in parallel; reused when present)."""
    from concurrent.futures import ProcessPoolExecutor

    from testcases.generator import write_input
    from testcases.suite import load_suite
    suite = load_suite("hw4")
    paths = {t: folder / f"{t}.in" for t in tests}
    missing = [t for t, p in paths.items() if not p.is_file()]
    with ProcessPoolExecutor(max_workers=min(16, len(missing) or 1)) as pool:
        list(pool.map(write_input, [paths[t] for t in missing], [suite.test(t) for t in missing]))
    return paths


def show_gpu_report(result: RunResult) -> None:
    """What the gate, the census and the GPU watch said of one run."""
    gpu = result.gpu
    if gpu is not None:
        print(f"  t01: {result.status.value}, said {gpu.gate.said}, census "
              f"{[c.get('kernels') for c in gpu.census]}, processes "
              f"{[p.to_dict() for p in gpu.processes]}, program pid {gpu.program_pid}",
              flush=True)


PARTS = ("before cuInit", "start-up (gated)", "to the first copy", "GPU work",
         "after the last copy", "exit and teardown")


def parts_of(result: RunResult) -> dict[str, float] | None:
    """A run's wall time in parts, from the sandbox's ready and exit and the census's stamps
    (CLOCK_MONOTONIC both; the GPU's copies on CUPTI's clock, tied to it at cuInit): before
    cuInit, the gated start-up (less the frozen wait), up to the first copy (allocations, input
    read), the GPU's work (first copy to last), after the last copy (the output written), and
    exit (the census written, the gate's teardown, the driver's release)."""
    gpu = result.gpu
    census = gpu.census[0] if gpu and gpu.census else None
    if result.clock is None or census is None or gpu is None or "copy_span" not in census:
        return None
    ready, end = result.clock
    init, ctx, leaving = census["init_begin"], census["ctx"], census["exit"]
    first, last, _busy = census["copy_span"]
    if not first:
        return None
    first_s = init + (first - census["gpu_clock_at_init"]) * 1e-9
    last_s = init + (last - census["gpu_clock_at_init"]) * 1e-9
    return {"before cuInit": init - ready,
            "start-up (gated)": ctx - init - gpu.gate.startup_wait_s,
            "to the first copy": first_s - ctx, "GPU work": last_s - first_s,
            "after the last copy": leaving - last_s,
            "exit and teardown": end - leaving - gpu.gate.teardown_wait_s}


def parts(args: argparse.Namespace, gate_dir: Path) -> list[dict[str, Any]]:
    """Where each run's time goes, and which part carries the run-to-run spread."""
    rows = []
    sandbox = sandbox_for(0, Setup(True, True), gate_dir, args.injection)
    for input_name in args.inputs.split(","):
        split = [p for p in (parts_of(run_program(sandbox, args.program, Path(input_name)))
                             for _ in range(args.runs)) if p is not None]
        summary = {}
        for part in PARTS:
            xs = [p[part] for p in split]
            med = statistics.median(xs)
            summary[part] = {"median": med, "sd": statistics.stdev(xs) if len(xs) > 1 else 0.0}
        totals = [sum(p.values()) for p in split]
        print(f"{Path(input_name).stem}: " + "  ".join(
            f"{k} {v['median'] * 1e3:.1f} ms (sd {v['sd'] * 1e3:.1f})" for k, v in summary.items())
            + f"  total sd {statistics.stdev(totals) * 1e3:.1f} ms", flush=True)
        rows.append({"input": input_name, "parts": summary, "runs": split})
    return rows


def suite_totals(args: argparse.Namespace, gate_dir: Path) -> list[dict[str, Any]]:
    """Rounds of the program over every hw4 test, the conditions interleaved round by round:
    per round the total of its 30 figures, and every run kept (a paired check replays them)."""
    tests = [f"t{i:02d}" for i in range(1, 31)]
    inputs = generate(Path(args.inputs), tests)
    conditions = [("idle", None), ("neighbour judging", "program"),
                  ("neighbour starting CUDA", "probe")]
    sandbox = sandbox_for(0, Setup(True, True), gate_dir, args.injection)
    kept: dict[str, list[dict[str, float]]] = {c: [] for c, _ in conditions}
    for r in range(args.rounds):
        for label, kind in conditions:
            gpus = [1] if kind else []
            neighbour = args.probe if kind == "probe" else args.program
            with Neighbours(gpus, Setup(True, True), gate_dir, args.injection, neighbour,
                            inputs["t11"]):
                results = {t: run_program(sandbox, args.program, inputs[t]) for t in tests}
            times = {t: r.wall_s for t, r in results.items()}
            if r == 0 and kind is None:
                show_gpu_report(results["t01"])
            kept[label].append(times)
            print(f"round {r + 1} {label:26s} total {sum(times.values()):8.3f} s", flush=True)
    rows = []
    for label, rounds in kept.items():
        totals = [sum(x.values()) for x in rounds]
        med = statistics.median(totals)
        spread = statistics.stdev(totals) / statistics.mean(totals) if len(totals) > 1 else 0
        rows.append({"label": label, "totals": totals, "median": med, "spread": spread,
                     "runs": rounds})
        print(f"{label:26s} totals {' '.join(f'{t:.3f}' for t in totals)}  median {med:.3f} s"
              f"  spread (sd/mean) {spread * 100:.2f}%", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--program", required=True, type=Path)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--probe", required=True, type=Path, help="a neighbour that starts CUDA")
    ap.add_argument("--injection", required=True, type=Path)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--keeper", action="store_true",
                    help="keep the driver keeper (worker/sandbox/gpu/driver_keeper.py) up")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--suite-totals", action="store_true",
                    help="only: rounds over all of hw4 (--inputs names a folder for the inputs)")
    ap.add_argument("--parts", action="store_true",
                    help="only: each run split into its parts, from the census's stamps")
    ap.add_argument("--idle-factors", action="store_true",
                    help="only: the program alone, with a busy core, no idle latency, or an "
                         "idle CUDA process beside it")
    args = ap.parse_args()
    gate_dir = Path(tempfile.mkdtemp(prefix="fj-gate-"))
    keeper = start_keeper(dict(os.environ, CUDA_VISIBLE_DEVICES="0")) if args.keeper else None
    try:
        measure_all(args, gate_dir)
    finally:
        if keeper is not None:
            stop_keeper(keeper)


def measure_all(args: argparse.Namespace, gate_dir: Path) -> None:
    if args.idle_factors or args.suite_totals or args.parts:
        only = suite_totals if args.suite_totals else parts if args.parts else idle_factors
        rows = only(args, gate_dir)
        if args.out:
            args.out.write_text(json.dumps(rows, indent=1))
        return
    others = list(range(1, args.gpus))
    rows = []
    conditions = [
        ("idle, no injection", Setup(False, False), [], None),
        ("idle, gate", Setup(True, True), [], None),
        ("1 neighbour starting CUDA, no gate", Setup(False, True), others[:1], "probe"),
        ("1 neighbour starting CUDA, gate", Setup(True, True), others[:1], "probe"),
        ("1 neighbour judging, no gate", Setup(False, True), others[:1], "program"),
        ("1 neighbour judging, gate", Setup(True, True), others[:1], "program"),
        (f"{len(others)} neighbours starting CUDA, gate", Setup(True, True), others, "probe"),
        ("idle, gate, again", Setup(True, True), [], None),
    ]
    if len(others) < 2:
        conditions = [c for c in conditions if not c[0].startswith(f"{len(others)} neighbours")]
    for input_name in args.inputs.split(","):
        input_path = Path(input_name)
        for label, setup, gpus, kind in conditions:
            if len(gpus) == 0 and kind is not None:
                continue
            sandbox = sandbox_for(0, setup, gate_dir, args.injection)
            neighbour = args.probe if kind == "probe" else args.program
            with Neighbours(gpus, setup, gate_dir, args.injection, neighbour, input_path) as n:
                runs = [run_program(sandbox, args.program, input_path) for _ in range(args.runs)]
                rows.append({**row(f"{input_path.stem}: {label}", runs, n.lives),
                             "input": input_path.name})
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
