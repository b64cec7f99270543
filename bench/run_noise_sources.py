"""Where one run's noise comes from, and whether a knob the judge holds quiets it: back-to-back
pairs of the same built program on hw4's tests, through the worker's own path (its settings'
machine: run cores, driver keeper, driver gate, census injection), knobs interleaved.

    nvcc -O3 -arch=sm_90 -o /tmp/hw4 tests/hostile/cuda-correct/hw4.cu
    python3 bench/run_noise_sources.py --program /tmp/hw4 --inputs /tmp/hw4-inputs \\
        [--knobs cuda-default,one-connection,huge-malloc] [--stop-after 400] [--out runs.json]
    python3 bench/run_noise_sources.py --replay runs.json [--checks 600]

A round draws one of the 30 tests and runs the program twice back to back under each knob, the
knobs' order rotating from round to round: ln(first/second) is what a paired check's round sees
of one program against itself, so its sd per knob is the figure a knob must lower. Every run
keeps its figure (RunResult.wall_s), its parts from the census's stamps (start-up, GPU work,
output write, exit: bench/neighbour_check.py `parts_of`), the CPU ticks the hypervisor stole
from the run's cores while it ran (/proc/stat), and the GPU's SM clock and temperature after it
(NVML). The report splits the pair noise by part, and says whether stolen time or the clock
explains the slow runs: a source the judge could see is one it could discard. `--checks N`
replays the final check (bench/rank_check.py's rule) N times per row from each knob's pairs as
drawn rounds, a fixed sleep on the alternate side: 3% of the knob's own figure, and 3% of
cuda-default's (the same seconds of the program's own work).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

KNOBS: dict[str, dict[str, str]] = {
    # CUDA as it comes (the judge's default): eight hardware work queues
    "cuda-default": {},
    # malloc's large blocks on transparent huge pages (madvise): the output buffer's first touch
    # faults 512x less often
    "huge-malloc": {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"},
    # one hardware work queue (what FLASHJUDGE_CUDA_CONNECTIONS=1 gives every run)
    "one-connection": {"CUDA_DEVICE_MAX_CONNECTIONS": "1"},
    # every module loaded at context creation rather than at the first launch
    "eager-modules": {"CUDA_MODULE_LOADING": "EAGER"},
}
PARTS = ("before cuInit", "start-up (gated)", "to the first copy", "GPU work",
         "after the last copy", "exit and teardown")
TESTS = tuple(f"t{i:02d}" for i in range(1, 31))


@dataclass(frozen=True)
class Run:
    """One timed run and what went on around it."""

    round: int
    knob: str
    test: str
    second: bool  # the second run of its pair
    seconds: float  # the judge's figure
    parts: dict[str, float] | None  # seconds per part (None: the census had no copies)
    stolen_ticks: int  # USER_HZ ticks of steal on the run's cores during the run
    sm_mhz: int  # the GPU's SM clock just after the run (0: no NVML)
    temp_c: int


def steal_ticks(cpus: set[int] | None, stat: str = "/proc/stat") -> int:
    """Steal ticks so far, summed over `cpus` (None: the machine's total line)."""
    total = 0
    for line in Path(stat).read_text().splitlines():
        name, *fields = line.split()
        if not name.startswith("cpu") or len(fields) < 8:
            continue
        if (cpus is None and name == "cpu") or (cpus is not None and name[3:].isdigit()
                                                and int(name[3:]) in cpus):
            total += int(fields[7])
    return total


def pair_logs(runs: Sequence[Run]) -> dict[str, list[tuple[Run, Run]]]:
    """Each knob's pairs (first, second) in run order."""
    firsts: dict[tuple[int, str], Run] = {}
    pairs: dict[str, list[tuple[Run, Run]]] = defaultdict(list)
    for run in runs:
        if not run.second:
            firsts[(run.round, run.knob)] = run
        elif (run.round, run.knob) in firsts:
            pairs[run.knob].append((firsts[(run.round, run.knob)], run))
    return pairs


def test_medians(runs: Sequence[Run]) -> dict[tuple[str, str], float]:
    """The median figure of each (knob, test): what a run's excess is taken against."""
    by: dict[tuple[str, str], list[float]] = defaultdict(list)
    for run in runs:
        by[(run.knob, run.test)].append(run.seconds)
    return {k: statistics.median(v) for k, v in by.items()}


def sd(xs: Sequence[float]) -> float:
    return statistics.stdev(xs) if len(xs) > 1 else 0.0


def knob_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Per knob: the pair noise (sd of ln(first/second)), its speed against cuda-default (median
    over tests of ln of the medians), and each part's pair noise as a share of the run."""
    pairs, medians = pair_logs(runs), test_medians(runs)
    rows: list[dict[str, Any]] = []
    for knob, kp in pairs.items():
        logs = [math.log(a.seconds / b.seconds) for a, b in kp]
        speed = [math.log(medians[(knob, t)] / medians[("cuda-default", t)])
                 for (k, t) in medians if k == knob and ("cuda-default", t) in medians]
        split = [(a, b) for a, b in kp if a.parts and b.parts]
        parts = {p: sd([(a.parts[p] - b.parts[p]) / statistics.mean([a.seconds, b.seconds])
                        for a, b in split if a.parts and b.parts]) for p in PARTS}
        rows.append({"knob": knob, "pairs": len(kp), "pair_sd": sd(logs),
                     "speed": statistics.median(speed) if speed else 0.0, "parts": parts,
                     "abs_sd": sd([a.seconds - b.seconds for a, b in kp]),
                     "run_s": statistics.fmean(r.seconds for pair in kp for r in pair)})
    base = next((r for r in rows if r["knob"] == "cuda-default"), rows[0] if rows else None)
    for row in rows:  # rounds a fixed gap in seconds needs go as sd^2, each costs its runs
        row["gpu_s_for_a_gap"] = (row["abs_sd"] ** 2 * row["run_s"]
                                  / max(base["abs_sd"] ** 2 * base["run_s"], 1e-12)
                                  if base else 1.0)
    return rows


def steal_row(runs: Sequence[Run]) -> dict[str, Any]:
    """Whether stolen ticks mark the slow runs: the runs with steal, their median excess over
    their test and knob's median, and the pair noise of the pairs where neither run lost any."""
    med = test_medians(runs)
    excess = [(run.stolen_ticks > 0, math.log(run.seconds / med[(run.knob, run.test)]))
              for run in runs]
    robbed = [e for s, e in excess if s]
    clean = [math.log(a.seconds / b.seconds) for kp in pair_logs(runs).values()
             for a, b in kp if a.stolen_ticks == 0 and b.stolen_ticks == 0]
    return {"runs": len(runs), "robbed": len(robbed),
            "robbed_excess": statistics.median(robbed) if robbed else 0.0,
            "other_excess": statistics.median([e for s, e in excess if not s] or [0.0]),
            "clean_pair_sd": sd(clean), "clean_pairs": len(clean)}


def clock_row(runs: Sequence[Run]) -> dict[str, Any]:
    """The SM clocks and temperatures seen, and how a run's excess tracks its clock."""
    clocks = [r.sm_mhz for r in runs if r.sm_mhz]
    med = test_medians(runs)
    excess = [math.log(r.seconds / med[(r.knob, r.test)]) for r in runs if r.sm_mhz]
    corr = (statistics.correlation(clocks, excess)
            if len(set(clocks)) > 1 and len(set(excess)) > 1 else 0.0)
    temps = [r.temp_c for r in runs if r.sm_mhz]
    return {"clocks": sorted(set(clocks)), "temp_range": [min(temps), max(temps)] if temps else [],
            "clock_excess_corr": corr}


def report(runs: Sequence[Run]) -> None:
    print(f"{'knob':<15} {'pairs':>5} {'pair sd':>8} {'per run':>8} {'speed':>7} "
          f"{'sd ms':>6} {'GPU s':>6}  " + "  ".join(f"{p[:12]:>12}" for p in PARTS))
    for row in knob_rows(runs):
        print(f"{row['knob']:<15} {row['pairs']:>5} {row['pair_sd']:>8.2%} "
              f"{row['pair_sd'] / math.sqrt(2):>8.2%} {row['speed']:>+7.1%} "
              f"{row['abs_sd'] * 1e3:>6.1f} {row['gpu_s_for_a_gap']:>6.2f}  "
              + "  ".join(f"{row['parts'][p]:>12.2%}" for p in PARTS))
    print("(pair sd: of ln(first/second); sd ms: of first - second; GPU s: what ordering a gap "
          "of fixed seconds costs, against cuda-default; parts: sd of each part's difference "
          "over the pair's run)")
    st = steal_row(runs)
    print(f"stolen ticks: {st['robbed']} of {st['runs']} runs lost some; their median excess "
          f"{st['robbed_excess']:+.1%} (others {st['other_excess']:+.1%}); pairs with none "
          f"stolen: {st['clean_pairs']}, pair sd {st['clean_pair_sd']:.2%}")
    ck = clock_row(runs)
    print(f"SM clocks seen {ck['clocks']} MHz, temperatures {ck['temp_range']} C, "
          f"correlation of clock and excess {ck['clock_excess_corr']:+.2f}")


SIDE_OVERHEAD_S = 0.045  # the sandbox's work around one run in a round (docs/benchmarks.md: +14%)


def check_rows(runs: Sequence[Run], trials: int,
               budgets: Sequence[float] = (30.0, 60.0)) -> list[dict[str, Any]]:
    """The final check replayed from each knob's pairs: per knob, gap and budget, the share of
    trials that ordered the slowed side right (bench/rank_check.py's resampling)."""
    from rank_check import Tally, resampled

    from flashjudge.contract.paired import A_FASTER, FAILED, PairedResult, PairedRound
    from worker.timing.paired import PairedConfig
    from worker.timing.sequential import RuleConfig

    medians = test_medians(runs)
    totals: dict[str, float] = defaultdict(float)
    for (knob, _), med in medians.items():
        totals[knob] += med
    tests = len({t for _, t in medians})
    rows = []
    for knob, pairs in pair_logs(runs).items():
        for gap, of in (("3% of its own", knob), ("3% of cuda-default", "cuda-default")):
            sleep = 0.03 * totals.get(of, totals[knob]) / max(tests, 1)
            rounds = []
            for i, (x, y) in enumerate(pairs):
                a, b = (x, y) if i % 2 == 0 else (y, x)  # the sides alternate who runs first
                cost = a.seconds + b.seconds + sleep + 2 * SIDE_OVERHEAD_S
                rounds.append(PairedRound(a.seconds, b.seconds + sleep, cost, i % 2 == 0,
                                          a.test, 1 / max(tests, 1)))
            pool = Tally("3% slower")
            pool.add(PairedResult(FAILED, "pool", rounds), "B")
            for budget in budgets:
                got = resampled(pool, PairedConfig(budget, RuleConfig()), trials, seed=2)
                right = sum(r.outcome == A_FASTER for r in got.results) / trials
                rows.append({"knob": knob, "gap": gap, "sleep_ms": sleep * 1e3,
                             "budget": budget, "right": right})
    return rows


def report_checks(runs: Sequence[Run], trials: int) -> None:
    print(f"\n{'knob':<15} {'gap':<19} {'sleep ms':>8} {'GPU s':>6} {'right':>6}")
    for row in check_rows(runs, trials):
        print(f"{row['knob']:<15} {row['gap']:<19} {row['sleep_ms']:>8.1f} "
              f"{row['budget']:>6g} {row['right']:>6.1%}")


class Gpu:
    """NVML's SM clock and temperature of GPU 0, or zeros without NVML."""

    def __init__(self) -> None:
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nvml: Any = pynvml
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception:  # noqa: BLE001 - no NVML: the run goes on without the clock
            self.nvml = None

    def read(self) -> tuple[int, int]:
        if self.nvml is None:
            return 0, 0
        return (self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM),
                self.nvml.nvmlDeviceGetTemperature(self.handle, self.nvml.NVML_TEMPERATURE_GPU))


def measure(args: argparse.Namespace) -> list[Run]:
    from neighbour_check import generate, parts_of

    from worker.celery_adapter.node import start_node_parts
    from worker.cpus import parse_cpulist
    from worker.sandbox.bwrap import Bind, BwrapSandbox, Limits
    from worker.sandbox.gpu.driver_keeper import stop_keeper
    from worker.settings import get_worker_settings

    # the knobs set the work queues, so the sandbox leaves CUDA's own whatever the node's setting
    machine = dataclasses.replace(get_worker_settings().machine(), cuda_connections=0)
    cpus = set(parse_cpulist(machine.run_cpus)) if machine.run_cpus else None
    inputs = generate(Path(args.inputs), list(TESTS))
    keeper = start_node_parts(machine, True)
    sandbox = BwrapSandbox.for_machine(machine, gpu=True)
    gpu, rng, knobs = Gpu(), random.Random(args.seed), args.knobs.split(",")
    print(f"run cores {machine.run_cpus or 'any'}; keeper {'up' if keeper else 'none'}; "
          f"knobs {knobs}", flush=True)

    def once(r: int, knob: str, test: str, second: bool) -> Run:
        work = Path(tempfile.mkdtemp(prefix="fj-noise-", dir="/dev/shm"))
        try:
            shutil.copy(args.program, work / "hw4")
            before = steal_ticks(cpus)
            result = sandbox.run(["./hw4", "/in", "out"], workdir=work,
                                 binds=[Bind(inputs[test], "/in")], env=KNOBS[knob],
                                 limits=Limits(wall_s=30, memory_bytes=8 << 30, timed=True))
            stolen = steal_ticks(cpus) - before
            mhz, temp = gpu.read()
            return Run(r, knob, test, second, result.wall_s, parts_of(result), stolen, mhz, temp)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    runs: list[Run] = []
    began = time.monotonic()
    try:
        for r in range(args.rounds):
            if time.monotonic() - began > args.stop_after:
                break
            test = rng.choice(TESTS)
            for knob in knobs[r % len(knobs):] + knobs[:r % len(knobs)]:
                runs += [once(r, knob, test, False), once(r, knob, test, True)]
            if args.out and r % 10 == 9:
                args.out.write_text(json.dumps([asdict(x) for x in runs]))
    finally:
        if keeper is not None:
            stop_keeper(keeper)
    return runs


def load(path: Path) -> list[Run]:
    return [Run(**x) for x in json.loads(path.read_text())]


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--program", type=Path, help="the built hw4 program")
    ap.add_argument("--inputs", default="/tmp/fj-hw4-inputs", help="hw4's inputs (made if missing)")
    ap.add_argument("--knobs", default="cuda-default,one-connection,huge-malloc",
                    help=f"of {', '.join(KNOBS)}")
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--stop-after", type=float, default=400.0, help="seconds of rounds at most")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--replay", type=Path, help="report a recorded --out file; run nothing")
    ap.add_argument("--checks", type=int, default=0,
                    help="replay the final check this many times per knob, gap and budget")
    args = ap.parse_args(argv)
    if args.replay:
        report(load(args.replay))
        if args.checks:
            report_checks(load(args.replay), args.checks)
        return
    unknown = [k for k in args.knobs.split(",") if k not in KNOBS]
    if unknown or args.program is None:
        ap.error(f"unknown knobs {unknown}" if unknown else "--program is required to measure")
    runs = measure(args)
    if args.out:
        args.out.write_text(json.dumps([asdict(x) for x in runs]))
    report(runs)
    if args.checks:
        report_checks(runs, args.checks)


if __name__ == "__main__":
    main()
