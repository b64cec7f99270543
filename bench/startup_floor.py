"""The start-up floor per test on this machine: what a program that only starts (and
creates its CUDA context), reads a test's input and writes its output takes, in the sandbox.

    python bench/startup_floor.py [--suite hw4] [--languages cuda-program,c-program]
                                  [--program tests/hostile/cuda-correct] [--program-runs 1]

Each language's floor comes from worker/timing/floor.py as a worker measures it (the calibration
program built by that language's build line, FLOOR_RUNS runs per input size, lower median). With
--program, that submission is built the same way and run on each test's input through the same
run (no comparison: only the inputs are generated, never the expected outputs), so the table
shows a real program's whole time beside its floor. Prints one row per test, then the totals.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from testcases.generator import write_input
from testcases.prepared import PreparedTest
from testcases.suite import TestSpec, load_suite
from worker.languages import Language, get_language, infer_language
from worker.pipeline import JudgeConfig, build_settings
from worker.running.build import build
from worker.running.testrun import TestInputs
from worker.sandbox.bwrap import BwrapSandbox, Sandbox
from worker.settings import get_worker_settings
from worker.timing.floor import FloorMeter, run_floor


def generated(spec: TestSpec, folder: Path) -> TestInputs:
    """The test's input, generated from its seed (the floor needs no expected output)."""
    path = folder / f"{spec.id}.in"
    if not path.is_file():
        write_input(path, spec)
    return TestInputs(PreparedTest(spec, spec.seed, path, path, "none"))


def built_program(folder: Path, config: JudgeConfig, work: Path) -> tuple[Language, Path,
                                                                          Sandbox]:
    """A submission's folder built as the judge builds it; its language, product and sandbox."""
    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()
             and p.name != "expected.toml"}
    language = get_language(infer_language(files))
    sandbox = BwrapSandbox.for_machine(config.machine, gpu=language.uses_gpu)
    outcome = build(language, files, build_settings(language, config), sandbox, work)
    if outcome.product is None:
        sys.exit(f"{folder} did not build:\n{outcome.compile.log}")
    return language, outcome.product, sandbox


def table_row(spec: TestSpec, names: list[str], meter: FloorMeter, sandboxes: dict[str, Sandbox],
              program: tuple[Language, Path, Sandbox] | None, runs: int, folder: Path,
              config: JudgeConfig, cache: Path) -> list[float]:
    """One test's floors (per language), and the program's time and its time above its floor."""
    inputs = generated(spec, folder)
    row = [meter.floor_of(get_language(n), inputs, cache, config, sandboxes[n]).seconds
           for n in names]
    if program is not None:
        language, product, sandbox = program
        times = [run_floor(product, language, inputs, config, sandbox) for _ in range(runs)]
        whole = statistics.median_low(times)
        row += [whole, whole - row[names.index(language.name)]]
    (folder / f"{spec.id}.in").unlink()
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="hw4")
    parser.add_argument("--languages", default="cuda-program,c-program")
    parser.add_argument("--program", type=Path, help="a submission's folder to time beside")
    parser.add_argument("--program-runs", type=int, default=1)
    args = parser.parse_args()
    settings = get_worker_settings()
    config, cache = settings.judge_config(), settings.cache_dir
    names = [n for n in args.languages.split(",") if n]
    sandboxes: dict[str, Sandbox] = {
        n: BwrapSandbox.for_machine(config.machine, gpu=get_language(n).uses_gpu)
                 for n in names}
    meter = FloorMeter()
    with tempfile.TemporaryDirectory(prefix="floor-bench-") as tmp:
        program = built_program(args.program, config, Path(tmp)) if args.program else None
        head = ["test", "B x N x d", "MB"] + [f"{n} floor s" for n in names]
        print(" | ".join(head + (["program s", "above floor s"] if program else [])), flush=True)
        totals: list[float] = []
        for spec in load_suite(args.suite).tests:
            row = table_row(spec, names, meter, sandboxes, program, args.program_runs,
                            Path(tmp), config, cache)
            totals = [t + v for t, v in zip(totals or [0.0] * len(row), row, strict=True)]
            print(" | ".join([spec.id, f"{spec.B} x {spec.N} x {spec.d}",
                              f"{spec.header.input_bytes / 1e6:.1f}"]
                             + [f"{v:.4f}" for v in row]), flush=True)
        print(" | ".join(["total", "", ""] + [f"{t:.3f}" for t in totals]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
