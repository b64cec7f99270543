"""The split timing pair on a real GPU: every forger of tests/hostile/forgers/ judged next to its
honest twin, and honest figures compared with the in-process harness's (the figure students knew).

Needs an NVIDIA GPU, nvcc and the sandbox (gpu marker: skipped elsewhere). Each test's overhead is
calibrated once with our own runner; the student's library is built in the sandbox as a real
submission is. With $FLASHJUDGE_RESULTS_DIR set, every judgement is kept there as JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest
from forger_corpus import ForgerCase, all_forgers, load_forger, meets

from kernels.fileformat import InputHeader
from testcases.prepared import PreparedTest, prepare_suite
from testcases.suite import load_suite
from worker.build import build
from worker.harness.build import RUNNER, TIMER, find_toolchain, program_binary
from worker.harness.pair import PairJob, PairPrograms, calibrate, run_pair
from worker.harness.pair_judge import Expected, judge_pair, to_test_result
from worker.harness.verify import Calibration, TimingVerdict
from worker.languages import BuildSettings, get_language
from worker.languages.arch import gpu_arch, supported_archs
from worker.pipeline import FRESH_SEED_OFFSET, JudgeRequest, judge
from worker.sandbox import GpuAccess, Sandbox
from worker.testrun import run_limits

pytestmark = [pytest.mark.gpu, pytest.mark.slow]
CASES = all_forgers()
BUDGET_S = 1.0
HONEST_AGREEMENT = 0.10  # the pair's figure for an honest kernel vs the in-process harness's


@dataclass(frozen=True)
class Judged:
    verdict: str  # the test's verdict
    timing: TimingVerdict | None  # what the timer's report came to
    message: str  # the student's line


class Bench:
    """One GPU sandbox, our two programs, prepared tests, calibrations and judgements, shared."""

    def __init__(self, cache: Path) -> None:
        self.cache, self.arch = cache, gpu_arch()
        self.sandbox = Sandbox(gpu=GpuAccess.for_visible_device())
        self.timer = program_binary(cache, self.arch, TIMER)
        self.runner = program_binary(cache, self.arch, RUNNER)
        self.env = {"LD_LIBRARY_PATH": str(find_toolchain().lib_dir)}
        self.suite = load_suite("hw4")
        self.tests: dict[str, tuple[PreparedTest, PreparedTest]] = {}
        self.calibrations: dict[str, Calibration] = {}
        self.judged: dict[tuple[str, str], Judged] = {}

    def prepared(self, test_id: str) -> tuple[PreparedTest, PreparedTest]:
        if test_id not in self.tests:
            spec = self.suite.test(test_id)
            first = prepare_suite(self.suite, self.cache, "auto", tests=[test_id])[test_id]
            fresh = prepare_suite(self.suite, self.cache, "auto", spec.seed + FRESH_SEED_OFFSET,
                                  tests=[test_id])[test_id]
            self.tests[test_id] = (first, fresh)
        return self.tests[test_id]

    def job(self, test_id: str) -> PairJob:
        first, fresh = self.prepared(test_id)
        spec = first.spec
        limits = run_limits(InputHeader(spec.B, spec.N, spec.d), spec.time_limit_s,
                            30.0 + 3 * spec.time_limit_s + BUDGET_S)
        return PairJob(Path(first.input_path), Path(fresh.input_path), spec.time_limit_s,
                       BUDGET_S, limits, self.env)

    def calibration(self, test_id: str) -> Calibration:
        if test_id not in self.calibrations:
            self.calibrations[test_id] = calibrate(self.sandbox, self.timer, self.runner,
                                                   self.job(test_id), f"cal-{test_id}")
        return self.calibrations[test_id]

    def library(self, case: ForgerCase, artifacts: Path) -> Path:
        settings = BuildSettings(gpu_arch=self.arch, supported_archs=supported_archs())
        outcome = build(get_language("cuda-kernel"), {"solve.cu": case.source}, settings,
                        self.sandbox, artifacts)
        assert outcome.product is not None, outcome.compile.log
        return outcome.product

    def judge(self, name: str, test_id: str) -> Judged:
        key = (name, test_id)
        if key not in self.judged:
            self.judged[key] = self._judge(load_forger(name), test_id)
        return self.judged[key]

    def _judge(self, case: ForgerCase, test_id: str) -> Judged:
        artifacts = Path(tempfile.mkdtemp(prefix=f"forger-{case.name}-"))
        first, fresh = self.prepared(test_id)
        spec = first.spec
        expected = Expected(Path(first.expected_path), Path(fresh.expected_path),
                            self.suite.tolerance, self.calibration(test_id), None)
        programs = PairPrograms(self.timer, self.runner, self.library(case, artifacts))
        run = run_pair(self.sandbox, programs, self.job(test_id), f"{case.name}-{test_id}")
        try:
            judged = judge_pair(run, InputHeader(spec.B, spec.N, spec.d), spec.time_limit_s,
                                expected)
            _keep(f"{case.name}-{test_id}", to_test_result(test_id, spec.time_limit_s, run,
                                                           judged).to_dict(), judged.timing)
        finally:
            for directory in [*run.scratch, artifacts]:
                shutil.rmtree(directory, ignore_errors=True)
        return Judged(str(judged.classification.verdict), judged.timing,
                      judged.classification.message)


def _keep(name: str, result: dict, timing: TimingVerdict | None) -> None:
    directory = os.environ.get("FLASHJUDGE_RESULTS_DIR")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        doc = {"result": result, "timing": asdict(timing) if timing else None}
        (Path(directory) / f"timer-{name}.json").write_text(json.dumps(doc, default=str))


@pytest.fixture(scope="module")
def bench(engine_cache: Path) -> Bench:
    if not Path("/dev/nvidiactl").exists() or shutil.which("nvcc") is None:
        pytest.skip("needs an NVIDIA GPU and nvcc")  # before the sandbox looks for the GPU
    return Bench(engine_cache)


def test_the_calibrated_overhead_is_small_and_steady(bench: Bench) -> None:
    cal = bench.calibration("t05")
    assert 0 < cal.fixed_s < 2e-3 and cal.per_call_s < 50e-6 and cal.noise_s < 0.5e-3, cal


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


@pytest.mark.parametrize("test_id", ["t05", "t08", "t20"])
def test_an_honest_figure_stays_close_to_the_in_process_harness(bench: Bench,
                                                                 test_id: str) -> None:
    """What students saw before (CUDA events in one process) is what they see now."""
    case = load_forger("memory-timings-twin")
    old = judge(JudgeRequest("cuda-kernel", {"solve.cu": case.source}, "hw4", [test_id]),
                bench.cache).tests[0]
    new = bench._judge(case, test_id)
    assert old.verdict == "AC" and old.timing is not None and new.timing is not None
    ratio = new.timing.ranked_s / old.timing.mean_s
    _keep(f"agreement-{test_id}", {"old_s": old.timing.mean_s, "new_s": new.timing.ranked_s,
                                   "ratio": ratio}, None)
    assert abs(ratio - 1) < HONEST_AGREEMENT, (old.timing, new.timing)
