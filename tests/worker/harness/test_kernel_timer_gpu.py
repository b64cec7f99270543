"""The split timing pair on a real GPU: every forger of tests/hostile/forgers/ judged next to its
honest twin, through worker/harness/split_run.py as a worker would run a cuda-kernel test.

Needs an NVIDIA GPU, nvcc and the sandbox (gpu marker: skipped elsewhere). Each shape's overhead is
calibrated once with our own runner; the student's library is built in the sandbox as a real
submission is (once per case, the selected cases all at once before the first judgement). With
$FLASHJUDGE_RESULTS_DIR set, every judgement and each shape's calibrated overhead are kept there as
JSON. How close honest figures stay to the in-process harness's is measured by
bench/kernel_timer_agreement.py.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
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
BUILDERS = 8  # libraries built at once (nvcc in the sandbox, one CPU each)


@dataclass(frozen=True)
class Judged:
    verdict: str  # the test's verdict
    timing: TimingVerdict | None  # what the timer's report came to
    message: str  # the student's line
    stderr: str  # the end of the runner's stderr (a forger says there when it could not attack)


class Bench:
    """One GPU sandbox, the split timer, prepared tests and judgements, shared by the module."""

    def __init__(self, cache: Path, artifacts: Path, machine: Machine) -> None:
        self.cache, self.artifacts, self.machine = cache, artifacts, machine
        self.arch = gpu_arch(machine)
        self.sandbox = BwrapSandbox.for_machine(machine, gpu=True)
        self.split = SplitTimer.build(cache, self.arch, find_toolchain(machine.cuda_home))
        self.env = {"LD_LIBRARY_PATH": str(find_toolchain(machine.cuda_home).lib_dir)}
        self.suite = load_suite("hw4")
        self.inputs = InputCache()
        self.tests: dict[str, tuple[PreparedTest, PreparedTest]] = {}
        self.judged: dict[tuple[str, str], Judged] = {}
        self.libraries: dict[str, Path] = {}

    def prepared(self, test_id: str) -> tuple[PreparedTest, PreparedTest]:
        if test_id not in self.tests:
            spec = self.suite.test(test_id)
            first = prepare_suite(self.suite, self.cache, "auto", tests=[test_id])[test_id]
            fresh = prepare_suite(self.suite, self.cache, "auto", spec.seed + FRESH_SEED_OFFSET,
                                  tests=[test_id])[test_id]
            self.tests[test_id] = (first, fresh)
        return self.tests[test_id]

    def library(self, name: str) -> Path:
        """The case's shared library, built once (in the sandbox, as a submission is)."""
        if name not in self.libraries:
            directory = self.artifacts / name
            directory.mkdir(exist_ok=True)
            settings = BuildSettings(gpu_arch=self.arch, supported_archs=supported_archs())
            outcome = build(get_language("cuda-kernel"), {"solve.cu": load_forger(name).source},
                            settings, self.sandbox, directory)
            assert outcome.product is not None, outcome.compile.log
            self.libraries[name] = outcome.product
        return self.libraries[name]

    def build_all(self, names: set[str]) -> None:
        """Every library the session will judge, BUILDERS at a time (a pass is then minutes)."""
        with ThreadPoolExecutor(max_workers=BUILDERS) as pool:
            list(pool.map(self.library, sorted(names)))

    def judge(self, name: str, test_id: str) -> Judged:
        if (name, test_id) not in self.judged:
            self.judged[(name, test_id)] = self._judge(load_forger(name), test_id)
        return self.judged[(name, test_id)]

    def _judge(self, case: ForgerCase, test_id: str) -> Judged:
        ctx = RunContext(sandbox=self.sandbox, product=self.library(case.name),
                         inputs=self.inputs, tolerance=self.suite.tolerance, env=self.env,
                         kernel_budget_s=BUDGET_S, machine=self.machine)
        result, timing = run_split_kernel_test(ctx, *self.prepared(test_id), self.split)
        _keep(f"timer-{case.name}-{test_id}", {"result": result.to_dict(),
                                               "timing": asdict(timing) if timing else None})
        return Judged(str(result.verdict), timing, result.message, result.stderr_tail[-400:])


def _keep(name: str, doc: dict) -> None:
    directory = os.environ.get("FLASHJUDGE_RESULTS_DIR")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        (Path(directory) / f"{name}.json").write_text(json.dumps(doc, default=str))


def _selected_cases(request: pytest.FixtureRequest) -> set[str]:
    """The corpus cases this session's selected tests judge, with their partners."""
    names: set[str] = set()
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        case = callspec and callspec.params.get("case")
        if isinstance(case, ForgerCase):
            names |= {case.name, case.partner}
    return names


@pytest.fixture(scope="module")
def bench(engine_cache: Path, machine: Machine,
          request: pytest.FixtureRequest) -> Iterator[Bench]:
    if not Path("/dev/nvidiactl").exists() or shutil.which("nvcc") is None:
        pytest.skip("needs an NVIDIA GPU and nvcc")  # before the sandbox looks for the GPU
    artifacts = Path(tempfile.mkdtemp(prefix="forger-libraries-"))
    bench = Bench(engine_cache, artifacts, machine)
    bench.build_all(_selected_cases(request) | {"memory-timings-twin"})
    yield bench
    shutil.rmtree(artifacts, ignore_errors=True)


def test_the_calibrated_overhead_is_small_and_steady(bench: Bench) -> None:
    """One call per turn costs a round trip per call: the overhead is mostly per call now (kept
    as calibration-80x512x32.json in $FLASHJUDGE_RESULTS_DIR, in ms and µs)."""
    bench.judge("memory-timings-twin", "t05")
    (cal,) = [c for shape, c in bench.split.calibrations.items() if shape == (80, 512, 32)]
    _keep("calibration-80x512x32", {"fixed_ms": cal.fixed_s * 1e3,
                                     "per_call_us": cal.per_call_s * 1e6,
                                     "noise_ms": cal.noise_s * 1e3, "flush_ms": cal.flush_ms})
    # H200, 2026-11-26: 0.36 ms per call (two context switches per call: docs/kernel-timing.md)
    assert 0 <= cal.fixed_s < 1e-3 and 0 < cal.per_call_s < 0.5e-3, cal
    assert cal.noise_s < 0.5e-3, cal


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
