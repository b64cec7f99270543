"""The start-up floor: per test, the time of a program that only starts, reads and writes.

A whole-program test's time (cuda-program, c-program) includes the process's start, the CUDA
context and the file I/O: 0.22-0.30 s on an H200 for hw4's small tests, most of their time. So a
student whose kernel got twice as fast sees 0.26 s become 0.25 s. The floor says how much of each
time is that fixed part: the calibration program `floor.c` (what every hw4 program must do and
nothing else) is built by the language's own build line (cuda-program: hw4.cu, nvcc; c-program:
hw4.c, gcc -fopenmp), as a student's would be, and run in the same sandbox, with the same limits,
environment and input binding as a test (worker/running/testrun.py), timed by the same clock
(RunResult.wall_s, the test's `seconds`) and summed up by the refinement's statistic (the lower
median, worker/timing/stats.py) over FLOOR_RUNS runs.

Its work depends only on the input's size, so it is measured once per size (B*N*d) per worker
process and GPU (`FloorMeter`, which the Celery adapter keeps for the process's life): hw4's 30
tests have 12 sizes, about 36 runs, on a worker's first judging of a whole-program language. A
floor that cannot be measured never fails the judging: the block carries the reason instead.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from flashjudge.contract import JudgeResult, LanguageFacts
from flashjudge.contract.floor import FloorPoint, StartupFloor
from kernels.fileformat import InputHeader
from testcases.suite import Suite, load_suite
from worker.languages import Language
from worker.machine import Machine
from worker.pipeline import JudgeConfig, JudgeRequest, build_settings, run_env
from worker.running.build import build
from worker.running.fresh import fresh_workdir
from worker.running.testrun import INPUT_TARGET, OUTPUT_NAME, TestInputs, check_output, run_limits
from worker.sandbox.bwrap import Bind, BwrapSandbox, Sandbox
from worker.sandbox.workspace import remove_tree
from worker.timing.stats import estimate, noise_for

log = logging.getLogger(__name__)
FLOOR_RUNS = 3  # runs per input size: the lower median of 3 ignores one slow outlier
WHAT_GPU = ("a program that creates its CUDA context while it reads the test's input, writes an "
            "output of the right size and exits")
WHAT_CPU = "a program that reads the test's input, writes an output of the right size and exits"


class FloorError(RuntimeError):
    """The calibration program could not be built or run here: our problem, never a student's."""


def floor_source() -> bytes:
    """The calibration program's source (worker/timing/floor.c, packaged with the worker)."""
    return resources.files("worker.timing").joinpath("floor.c").read_bytes()


def has_floor(facts: LanguageFacts | None) -> bool:
    """Whether a language has a start-up floor: its row names the file the calibration program
    is built as (a whole process's time; a kernel's timer times solve() alone)."""
    return facts is not None and facts.floor_built_as is not None


def what_floor(language: Language) -> str:
    """What the calibration program does, in words for the page."""
    return WHAT_GPU if language.uses_gpu else WHAT_CPU


@dataclass
class FloorMeter:
    """One worker process's floors: the calibration program built once per language and
    machine, its floor measured once per input size."""

    runs: int = FLOOR_RUNS  # runs per input size
    products: dict[tuple[str, Machine], Path] = field(default_factory=dict)  # built programs
    points: dict[tuple[str, Machine, int], FloorPoint] = field(default_factory=dict)  # by size

    def measure(self, request: JudgeRequest, result: JudgeResult, cache_dir: Path,
                config: JudgeConfig, sandbox: Sandbox | None = None) -> StartupFloor | None:
        """The floor of each test `result` judged; None where there is none to give (a kernel's
        language, a compile error, our own failure). Never raises: a failure is the block's
        `error`."""
        facts = config.languages.facts(result.language)
        if not has_floor(facts) or not result.compile.ok or result.system_error:
            return None
        language = config.languages.get(result.language)
        try:
            tests = _judged_inputs(language, request, result, Path(cache_dir), config)
            sandbox = sandbox or BwrapSandbox.for_machine(
                config.machine, gpu=language.uses_gpu, insecure=config.insecure)
            points = {t.prepared.spec.id: self.floor_of(language, t, Path(cache_dir), config,
                                                      sandbox) for t in tests}
        except Exception as exc:  # noqa: BLE001 - the verdicts stand; the page says why
            log.warning("could not measure the start-up floor: %s", exc)
            return StartupFloor(what=what_floor(language), error=f"{type(exc).__name__}: {exc}")
        return StartupFloor(points, what_floor(language))

    def floor_of(self, language: Language, inputs: TestInputs, cache_dir: Path,
                 config: JudgeConfig, sandbox: Sandbox) -> FloorPoint:
        """The floor for this test's input size: measured on first need, then remembered."""
        spec = inputs.prepared.spec
        key = (language.name, config.machine, spec.B * spec.N * spec.d)
        if key not in self.points:
            product = self._product(language, cache_dir, config, sandbox)
            # the first run on a size pays what no judged test pays (the binary and the input
            # not yet in the page cache, a GPU waking from idle without persistence mode): it
            # measured 0.42 s against 0.31 s for the runs after it on an H100, so it is dropped
            run_floor(product, language, inputs, config, sandbox)
            times = [run_floor(product, language, inputs, config, sandbox)
                     for _ in range(self.runs)]
            found = estimate(times, noise_for(language.facts))
            self.points[key] = FloorPoint(found.statistic, (found.high - found.low) / 2, found.n)
            log.info("start-up floor of %s on %s's size: %.4f s", language.name, spec.id,
                     found.statistic)
        return self.points[key]

    def _product(self, language: Language, cache_dir: Path, config: JudgeConfig,
                 sandbox: Sandbox) -> Path:
        key = (language.name, config.machine)
        if key not in self.products:
            self.products[key] = build_floor(language, cache_dir, config, sandbox)
        return self.products[key]


def _judged_inputs(language: Language, request: JudgeRequest, result: JudgeResult,
                   cache_dir: Path, config: JudgeConfig) -> list[TestInputs]:
    """The prepared inputs of the tests `result` holds (already in the cache: just judged)."""
    suite: Suite = config.suite or load_suite(request.suite)
    judged = [suite.test(t.id) for t in result.tests]
    return language.test_inputs(dataclasses.replace(suite, tests=judged), cache_dir,
                                config.device, request.seed)


def build_floor(language: Language, cache_dir: Path, config: JudgeConfig,
                sandbox: Sandbox) -> Path:
    """The calibration program built as `language` builds a submission (in the sandbox, the same
    command), kept in the cache under a name that changes with the source and the command."""
    built_as = language.facts.floor_built_as
    if built_as is None:
        raise FloorError(f"{language.name} has no start-up floor")
    files = {built_as: floor_source()}
    settings = build_settings(language, config)
    plan = language.plan(files, settings)
    digest = hashlib.sha256(files[built_as] + " ".join(plan.argv).encode())
    target = cache_dir / "floor" / f"{language.name}-{digest.hexdigest()[:16]}"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    artifacts = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        outcome = build(language, files, settings, sandbox, artifacts)
        if outcome.product is None:
            raise FloorError(f"the calibration program did not build: {outcome.compile.log}")
        os.replace(outcome.product, target)  # atomic: a concurrent worker sees all or nothing
    finally:
        remove_tree(artifacts)
    return target


def run_floor(product: Path, language: Language, inputs: TestInputs, config: JudgeConfig,
              sandbox: Sandbox) -> float:
    """One run of the calibration program on a test's input, exactly as that test runs a
    submission (worker/running/testrun.py): its wall time, seconds."""
    spec = inputs.prepared.spec
    header = InputHeader(spec.B, spec.N, spec.d)
    source = config.inputs.path_for(Path(inputs.prepared.input_path))
    with fresh_workdir(f"floor-{spec.id}", {"hw4": product},
                       scratch=config.machine.scratch) as workdir:
        run = sandbox.run(
            language.run_argv(INPUT_TARGET, OUTPUT_NAME), workdir=workdir,
            limits=run_limits(header, spec.time_limit_s, 0.0, config.base_memory_bytes),
            binds=[Bind(source, INPUT_TARGET)], env=run_env(config, None))
        written = check_output(workdir, OUTPUT_NAME, header.output_bytes)
    if run.status != "ok" or written.size != header.output_bytes:
        why = run.message or run.stderr_tail.strip()[-300:] or f"exit {run.exit_code}"
        raise FloorError(f"the calibration program failed on {spec.id}'s input: {why}")
    return run.wall_s
