"""The split timing pair on a real GPU: every forger of tests/hostile/forgers/ judged next to its
honest twin, through worker/harness/split_run.py as a worker would run a cuda-kernel test.

Needs an NVIDIA GPU, nvcc and the sandbox (gpu marker: skipped elsewhere). Each shape's overhead is
calibrated once with our own runner; the student's library is built in the sandbox as a real
submission is. With $FLASHJUDGE_RESULTS_DIR set, every judgement is kept there as JSON. How close
honest figures stay to the in-process harness's is measured by bench/kernel_timer_agreement.py.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from testcases.prepared import PreparedTest, prepare_suite
from testcases.suite import load_suite
from tests.worker.harness.forger_corpus import ForgerCase, all_forgers, load_forger, meets
from worker.harness.build import find_toolchain
from worker.harness.split_run import SplitTimer, run_split_kernel_test
from worker.harness.verify import TimingVerdict
from worker.languages import BuildSettings, get_language
from worker.languages.arch import gpu_arch, supported_archs
from worker.languages.cuda_kernel import FRESH_SEED_OFFSET
from worker.machine import Machine
from worker.running.build import build
from worker.running.testrun import RunContext
from worker.sandbox.bwrap import BwrapSandbox
from worker.sandbox.workspace import InputCache

pytestmark = [pytest.mark.gpu, pytest.mark.slow]
CASES = all_forgers()
BUDGET_S = 1.0


@dataclass(frozen=True)
class Judged:
    verdict: str  # the test's verdict
    timing: TimingVerdict | None  # what the timer's report came to
    message: str  # the student's line


class Bench:
    """One GPU sandbox, the split timer, prepared tests and judgements, shared by the module."""

    def __init__(self, cache: Path, machine: Machine) -> None:
        self.cache, self.arch, self.machine = cache, gpu_arch(machine), machine
        self.sandbox = BwrapSandbox.for_machine(machine, gpu=True)
        self.split = SplitTimer.build(cache, self.arch, find_toolchain(machine.cuda_home))
        self.env = {"LD_LIBRARY_PATH": str(find_toolchain(machine.cuda_home).lib_dir)}
        self.suite = load_suite("hw4")
        self.inputs = InputCache()
        self.tests: dict[str, tuple[PreparedTest, PreparedTest]] = {}
        self.judged: dict[tuple[str, str], Judged] = {}

    def prepared(self, test_id: str) -> tuple[PreparedTest, PreparedTest]:
        if test_id not in self.tests:
            spec = self.suite.test(test_id)
            first = prepare_suite(self.suite, self.cache, "auto", tests=[test_id])[test_id]
            fresh = prepare_suite(self.suite, self.cache, "auto", spec.seed + FRESH_SEED_OFFSET,
                                  tests=[test_id])[test_id]
            self.tests[test_id] = (first, fresh)
        return self.tests[test_id]

    def library(self, case: ForgerCase, artifacts: Path) -> Path:
        settings = BuildSettings(gpu_arch=self.arch, supported_archs=supported_archs())
        outcome = build(get_language("cuda-kernel"), {"solve.cu": case.source}, settings,
                        self.sandbox, artifacts)
        assert outcome.product is not None, outcome.compile.log
        return outcome.product

    def judge(self, name: str, test_id: str) -> Judged:
        if (name, test_id) not in self.judged:
            self.judged[(name, test_id)] = self._judge(load_forger(name), test_id)
        return self.judged[(name, test_id)]

    def _judge(self, case: ForgerCase, test_id: str) -> Judged:
        artifacts = Path(tempfile.mkdtemp(prefix=f"forger-{case.name}-"))
        try:
            ctx = RunContext(sandbox=self.sandbox, product=self.library(case, artifacts),
                             inputs=self.inputs, tolerance=self.suite.tolerance, env=self.env,
                             kernel_budget_s=BUDGET_S, machine=self.machine)
            result, timing = run_split_kernel_test(ctx, *self.prepared(test_id), self.split)
        finally:
            shutil.rmtree(artifacts, ignore_errors=True)
        _keep(f"{case.name}-{test_id}", result.to_dict(), timing)
        return Judged(str(result.verdict), timing, result.message)


def _keep(name: str, result: dict, timing: TimingVerdict | None) -> None:
    directory = os.environ.get("FLASHJUDGE_RESULTS_DIR")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        doc = {"result": result, "timing": asdict(timing) if timing else None}
        (Path(directory) / f"timer-{name}.json").write_text(json.dumps(doc, default=str))


@pytest.fixture(scope="module")
def bench(engine_cache: Path, machine: Machine) -> Bench:
    if not Path("/dev/nvidiactl").exists() or shutil.which("nvcc") is None:
        pytest.skip("needs an NVIDIA GPU and nvcc")  # before the sandbox looks for the GPU
    return Bench(engine_cache, machine)


def test_the_calibrated_overhead_is_small_and_steady(bench: Bench) -> None:
    bench.judge("memory-timings-twin", "t05")
    (cal,) = [c for shape, c in bench.split.calibrations.items() if shape == (80, 512, 32)]
    assert 0 < cal.fixed_s < 2e-3 and cal.noise_s < 0.5e-3, cal


@pytest.mark.parametrize("case", [c for c in CASES if c.is_twin], ids=lambda c: c.name)
def test_every_honest_twin_is_judged_clean(bench: Bench, case: ForgerCase) -> None:
    for test_id in case.tests:
        judged = bench.judge(case.name, test_id)
        assert meets("clean", judged.verdict, judged.timing, None), (test_id, judged)


@pytest.mark.parametrize("case", [c for c in CASES if not c.is_twin], ids=lambda c: c.name)
def test_every_forger_gets_the_conclusion_it_must(bench: Bench, case: ForgerCase) -> None:
    for test_id in case.tests:
        twin = bench.judge(case.partner, test_id)
        judged = bench.judge(case.name, test_id)
        twin_s = twin.timing.ranked_s if twin.timing else None
        assert any(meets(o, judged.verdict, judged.timing, twin_s) for o in case.outcomes), (
            test_id, case.outcomes, judged, twin_s)
