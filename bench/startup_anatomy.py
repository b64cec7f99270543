"""Where a CUDA process's start-up goes, and what a neighbour GPU's start-ups do to it.

    python3 bench/startup_anatomy.py --probe BIN [--inject LIB] [--program BIN --input FILE]
                                     [--runs 15] [--bwrap PATH] [--out FILE.json]

The probe (bench/startup_anatomy.cu) prints the monotonic time at the end of each phase of its
life: cuInit and device enumeration, the context, a 256 MB allocation, a kernel, the free, the
reset. Measured on GPU 0 while the node's other GPUs are idle, or each runs a loop of whole
probe lives ("full"), of cuInit alone ("init") or of a context with no explicit teardown
("ctx"). Then the same with a node-wide start-up gate: a flock held by each process from before
its exec until its context exists (released by a byte the process writes, or when NVML lists its
pid), so no two processes of the node are inside start-up at once, and the wait is before the
measured process's clock starts. Also: what NVML's process list shows for a process in another
PID namespace, how long after the context NVML sees it and what one NVML query costs, and what
the judge's CUDA injection (worker/harness/census_inject.c) adds to start-up. Needs GPUs.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import select
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PHASES = ("exec", "init", "ctx", "alloc", "kernel", "free", "reset", "exit", "total")
GATE_FILE = Path("/tmp/fj-startup-gate.lock")


@dataclass
class Run:
    """One probe life: its phases in seconds (exec = fork/exec to main), and the gate's wait."""

    phases: dict[str, float]
    waited: float = 0.0  # seconds spent waiting for the gate, before the clock started
    nvml_lag: float | None = None  # seconds from the context to NVML listing the pid
    census: dict[str, Any] | None = None


@dataclass
class Gate:
    """The node-wide start-up gate of this experiment: a flock, released by `release`."""

    how: str = "signal"  # "signal": the byte the process writes; "nvml": NVML lists its pid
    nvml: Any = None
    handles: dict[int, Any] = field(default_factory=dict)

    def hold(self) -> int:
        fd = os.open(GATE_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd


def gpu_env(gpu: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu), CUDA_DEVICE_ORDER="PCI_BUS_ID")
    env.update(extra or {})
    return env


def phases_of(doc: dict[str, float], t0: float, t1: float) -> dict[str, float]:
    """Phase durations from the probe's stamps (a phase it skipped reads 0)."""
    order = ("init", "ctx", "alloc", "kernel", "free", "reset")
    out: dict[str, float] = {"exec": doc["main"] - t0}
    last = doc["main"]
    for name in order:
        if doc[name] > 0:
            out[name] = doc[name] - last
            last = doc[name]
        else:
            out[name] = 0.0
    out["exit"] = t1 - doc["end"]
    out["total"] = t1 - t0
    return out


def nvml_pids(gate: Gate, gpu: int) -> set[int]:
    procs = gate.nvml.nvmlDeviceGetComputeRunningProcesses(gate.handles[gpu])
    return {p.pid for p in procs}


def wait_started(gate: Gate, gpu: int, r: int, pid: int, t_exec: float) -> float | None:
    """Block until the process's start-up is over by the gate's rule; NVML's lag if it read it."""
    deadline = t_exec + 5.0
    while time.monotonic() < deadline:
        if gate.how == "signal":
            ready, _, _ = select.select([r], [], [], 0.5)
            if ready:
                return None
        elif pid in nvml_pids(gate, gpu):
            return time.monotonic()
        else:
            time.sleep(0.0005)
    return None


def run_once(cmd: list[str], gpu: int, gate: Gate | None = None,
             extra_env: dict[str, str] | None = None) -> Run:
    """One life of `cmd` on `gpu`, through the gate when one is given."""
    r, w = os.pipe()
    held, waited, seen = -1, 0.0, None
    if gate is not None:
        t = time.monotonic()
        held = gate.hold()
        waited = time.monotonic() - t
    env = gpu_env(gpu, {"FLASHJUDGE_STARTUP_FD": str(w), **(extra_env or {})})
    t0 = time.monotonic()
    proc = subprocess.Popen([*cmd, "--signal-fd", str(w)], env=env, pass_fds=(w,),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(w)
    if gate is not None:
        seen = wait_started(gate, gpu, r, proc.pid, t0)
        os.close(held)
    out, err = proc.communicate()
    t1 = time.monotonic()
    os.close(r)
    try:
        doc = json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise SystemExit(f"probe failed: {err.decode()[-400:]}") from None
    lag = None if seen is None or doc["ctx"] <= 0 else seen - doc["ctx"]
    return Run(phases_of(doc, t0, t1), waited, lag)


class Neighbours:
    """Loops of probe lives on other GPUs while the measured runs go on."""

    def __init__(self, cmd: list[str], gpus: list[int], gate: Gate | None) -> None:
        self.cmd, self.gpus, self.gate = cmd, gpus, gate
        self.stop = threading.Event()
        self.lives = 0
        self.threads = [threading.Thread(target=self.loop, args=(g,), daemon=True) for g in gpus]

    def loop(self, gpu: int) -> None:
        while not self.stop.is_set():
            run_once(self.cmd, gpu, self.gate)
            self.lives += 1

    def __enter__(self) -> Neighbours:
        for t in self.threads:
            t.start()
        time.sleep(0.3)  # let every loop be inside its first life
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join()


def summary(runs: list[Run]) -> dict[str, Any]:
    med = {p: statistics.median(r.phases[p] for r in runs) for p in PHASES}
    totals = [r.phases["total"] for r in runs]
    mad = statistics.median(abs(t - med["total"]) for t in totals)
    lags = [r.nvml_lag for r in runs if r.nvml_lag is not None]
    return {"median": med, "spread": 1.4826 * mad / med["total"], "min": min(totals),
            "max": max(totals), "waited": statistics.median(r.waited for r in runs),
            "nvml_lag": statistics.median(lags) if lags else None, "n": len(runs)}


def measure(label: str, cmd: list[str], runs: int, neighbour: list[str] | None,
            gpus: list[int], gate: Gate | None, table: dict[str, Any],
            extra_env: dict[str, str] | None = None) -> None:
    def go() -> list[Run]:
        return [run_once(cmd, 0, gate, extra_env) for _ in range(runs)]
    if neighbour is None or not gpus:
        got = go()
        lives = 0
    else:
        with Neighbours(neighbour, gpus, gate) as n:
            got = go()
            lives = n.lives
    table[label] = {**summary(got), "neighbour_lives": lives}
    s = table[label]
    row = "  ".join(f"{s['median'][p] * 1e3:7.1f}" for p in PHASES)
    print(f"{label:34s} {row}  {s['spread'] * 100:5.1f}%  wait {s['waited'] * 1e3:6.1f}"
          f"  lives {lives}", flush=True)


def nvml_facts(gate: Gate, probe: str, bwrap: str | None) -> dict[str, Any]:
    """One NVML query's cost, and the pid NVML gives for a process in its own PID namespace."""
    n = 200
    t = time.monotonic()
    for _ in range(n):
        nvml_pids(gate, 0)
    facts: dict[str, Any] = {"query_ms": (time.monotonic() - t) / n * 1e3}
    if bwrap:
        cmd = [bwrap, "--unshare-pid", "--dev-bind", "/", "/", probe, "--upto", "kernel",
               "--hold-ms", "800"]
        proc = subprocess.Popen(cmd, env=gpu_env(0), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        time.sleep(0.6)
        seen = nvml_pids(gate, 0)
        tree = subprocess.run(["ps", "-o", "pid=", "--ppid", str(proc.pid)],
                              capture_output=True, text=True).stdout.split()
        proc.communicate()
        facts.update(nvml_saw=sorted(seen), bwrap_pid=proc.pid,
                     bwrap_children=[int(p) for p in tree])
    print(f"NVML: {json.dumps(facts)}", flush=True)
    return facts


def census_check(probe: str, inject: str, runs: int, table: dict[str, Any]) -> None:
    """The injection's cost at start-up and what its census says, in both of its modes."""
    for mode in ("activity", "callback"):
        path = f"/tmp/fj-census-{mode}.json"
        env = {"CUDA_INJECTION64_PATH": inject, "FLASHJUDGE_CENSUS_PATH": path,
               "FLASHJUDGE_CENSUS_MODE": mode}
        measure(f"idle, injected ({mode})", [probe], runs, None, [], None, table, env)
        doc = json.loads(Path(path).read_text())
        doc["init_ms"] = (doc["init_end"] - doc["init_begin"]) * 1e3
        table[f"census {mode}"] = doc
        print(f"  census: {json.dumps(doc)[:600]}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--probe", required=True)
    ap.add_argument("--inject")
    ap.add_argument("--program", help="a built hw4 binary, run as PROGRAM --input OUT")
    ap.add_argument("--input")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--bwrap")
    ap.add_argument("--out")
    ap.add_argument("--gpus", type=int, default=0, help="GPUs on the node (default: NVML's count)")
    args = ap.parse_args()
    gate = Gate()
    try:
        import pynvml
        pynvml.nvmlInit()
        gate.nvml = pynvml
        count = args.gpus or pynvml.nvmlDeviceGetCount()
        gate.handles = {i: pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)}
    except ImportError:
        count = args.gpus or 1
    others = list(range(1, count))
    probe = [args.probe]
    table: dict[str, Any] = {"gpus": count}
    print(f"{'condition (ms, median)':34s} " + "  ".join(f"{p:>7s}" for p in PHASES)
          + "  spread", flush=True)
    steps: list[tuple[str, Callable[[], None]]] = [
        ("idle", lambda: measure("idle", probe, args.runs, None, [], None, table)),
        ("n1 full", lambda: measure("1 neighbour: full lives", probe, args.runs, probe,
                                    others[:1], None, table)),
        ("n1 init", lambda: measure("1 neighbour: cuInit only", probe, args.runs,
                                    [args.probe, "--upto", "init"], others[:1], None, table)),
        ("n1 ctx", lambda: measure("1 neighbour: ctx, no reset", probe, args.runs,
                                   [args.probe, "--upto", "ctx"], others[:1], None, table)),
        ("nall full", lambda: measure(f"{len(others)} neighbours: full lives", probe, args.runs,
                                      probe, others, None, table)),
        ("gated idle", lambda: measure("gated, idle", probe, args.runs, None, [], gate, table)),
        ("gated n1", lambda: measure("gated, 1 neighbour full", probe, args.runs, probe,
                                     others[:1], gate, table)),
        ("gated nall", lambda: measure(f"gated, {len(others)} neighbours full", probe,
                                       args.runs, probe, others, gate, table)),
    ]
    for _, step in steps:
        step()
    if gate.nvml is not None:
        nvml_gate = Gate("nvml", gate.nvml, gate.handles)
        measure("nvml-gated, 1 neighbour full", probe, args.runs, probe, others[:1], nvml_gate,
                table)
        table["nvml"] = nvml_facts(gate, args.probe, args.bwrap)
    if args.inject:
        census_check(args.probe, args.inject, args.runs, table)
    if args.program and args.input:
        prog = [args.program, args.input, "/dev/shm/fj-anatomy.out"]
        for label, nb, g in (("program idle", None, None),
                             ("program, 1 neighbour full", probe, None),
                             ("program, gated, 1 neighbour full", probe, gate),
                             (f"program, gated, {len(others)} neighbours", probe, gate)):
            gpus = others if "neighbours" in label else others[:1]
            measure_program(label, prog, args.runs, nb, gpus, g, table)
    if args.out:
        Path(args.out).write_text(json.dumps(table, indent=1))


def measure_program(label: str, prog: list[str], runs: int, neighbour: list[str] | None,
                    gpus: list[int], gate: Gate | None, table: dict[str, Any]) -> None:
    """A real program's whole time (it writes no stamps: total only). Gated programs release
    the gate through the judge's injection, which they do not know about."""
    times: list[float] = []
    waits: list[float] = []

    def one() -> None:
        r, w = os.pipe()
        held, t = -1, time.monotonic()
        if gate is not None:
            held = gate.hold()
        waits.append(time.monotonic() - t)
        inject = os.environ.get("FJ_INJECT", "")
        env = gpu_env(0, {"FLASHJUDGE_STARTUP_FD": str(w), "CUDA_INJECTION64_PATH": inject}
                      if gate is not None and inject else None)
        t0 = time.monotonic()
        proc = subprocess.Popen(prog, env=env, pass_fds=(w,), stdout=subprocess.DEVNULL)
        os.close(w)
        if gate is not None:
            select.select([r], [], [], 2.0)
            os.close(held)
        proc.wait()
        times.append(time.monotonic() - t0)
        os.close(r)
    ctx: Any = Neighbours(neighbour, gpus, gate) if neighbour else None
    if ctx is not None:
        ctx.__enter__()
    try:
        for _ in range(runs):
            one()
    finally:
        if ctx is not None:
            ctx.__exit__()
    med = statistics.median(times)
    spread = 1.4826 * statistics.median(abs(t - med) for t in times) / med
    table[label] = {"median": med, "spread": spread, "min": min(times), "max": max(times),
                    "waited": statistics.median(waits)}
    print(f"{label:34s} total {med * 1e3:7.1f} ms  spread {spread * 100:4.1f}%  "
          f"min {min(times) * 1e3:6.1f} max {max(times) * 1e3:6.1f}  "
          f"wait {statistics.median(waits) * 1e3:5.1f}", flush=True)


if __name__ == "__main__":
    main()
