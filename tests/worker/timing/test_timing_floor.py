"""The start-up floor for real: the calibration program built by the language's own build line and
run in the sandbox on each judged test's input (c-program here; cuda-program on a GPU)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flashjudge.contract import LANGUAGES, JudgeResult, Verdict
from flashjudge.contract.floor import FloorPoint, StartupFloor, above_floor
from tests.worker.hostile_corpus import load_case
from worker.machine import Machine
from worker.pipeline import JudgeConfig, JudgeRequest, judge
from worker.sandbox.bwrap import BwrapSandbox, RunResult, RunStatus, Sandbox
from worker.timing.floor import FLOOR_RUNS, FloorMeter, floor_source, has_floor

# t06 (8 x 100 x 32) and t07 (4 x 33 x 64) differ in size; t01 and t02 of hw4-mini share one
ONE_SIZE_EACH = ["t06", "t07"]


class Counting:
    """The real sandbox, counting the calibration program's runs (a double of the protocol)."""

    def __init__(self, real: Sandbox) -> None:
        self.real = real
        self.insecure = real.insecure
        self.runs = 0

    def run(self, argv: list[str], **kwargs: Any) -> RunResult:
        self.runs += argv[0] == "./hw4"
        return self.real.run(argv, **kwargs)


class FailingRuns(Counting):
    """Builds for real; every run of the program fails as our sandbox failing would."""

    def run(self, argv: list[str], **kwargs: Any) -> RunResult:
        if argv[0] == "./hw4":
            return RunResult(RunStatus.SYSTEM_ERROR, None, None, 0.0, "", "", None,
                             "cannot create the run's cgroup")
        return self.real.run(argv, **kwargs)


def judged(cache: Path, config: JudgeConfig, tests: list[str],
           case: str = "correct-seq") -> tuple[JudgeRequest, JudgeResult]:
    request = JudgeRequest("c-program", load_case(case).files, "hw4-mini", tests)
    return request, judge(request, cache, config=config)


def test_a_judged_c_program_gets_a_floor_per_test(engine_cache: Path, judge_config: JudgeConfig,
                                                  cpu_sandbox: Sandbox) -> None:
    request, result = judged(engine_cache, judge_config, ONE_SIZE_EACH)
    assert [t.verdict for t in result.tests] == [Verdict.AC, Verdict.AC]
    floor = FloorMeter().measure(request, result, engine_cache, judge_config, cpu_sandbox)
    assert floor is not None and floor.error is None
    assert sorted(floor.tests) == ONE_SIZE_EACH
    for test in result.tests:
        point = floor.tests[test.id]
        assert point.seconds > 0 and point.runs == FLOOR_RUNS and point.band_s >= 0
        assert above_floor(test.seconds, point.seconds) == round(test.seconds - point.seconds, 6)
    assert floor.total(ONE_SIZE_EACH) == pytest.approx(sum(p.seconds for p in floor.tests.values()))
    assert "reads the test's input" in floor.what
    sent = {i: FloorPoint(round(p.seconds, 6), round(p.band_s, 6), FLOOR_RUNS)
            for i, p in floor.tests.items()}
    assert StartupFloor.from_dict(floor.to_dict()) == StartupFloor(sent, floor.what, None)


def test_the_floor_block_reads_back_as_the_worker_sent_it() -> None:
    """The block as it crosses the queue: seconds kept to the microsecond, a block that is not
    one (older workers, a cuda-kernel result, a damaged message) read as no floor."""
    floor = StartupFloor({"t06": FloorPoint(0.2345678, 0.0012344, 7)}, "starts, reads", None)
    block = {"tests": {"t06": {"seconds": 0.234568, "band_s": 0.001234, "runs": 7}},
             "what": "starts, reads", "error": None}
    assert floor.to_dict() == block
    assert StartupFloor.from_dict(block) == StartupFloor(
        {"t06": FloorPoint(0.234568, 0.001234, 7)}, "starts, reads", None)
    failed = {"tests": {}, "what": "", "error": "cannot create the run's cgroup"}
    assert StartupFloor.from_dict(failed) == StartupFloor({}, "", "cannot create the run's cgroup")
    assert StartupFloor.from_dict(None) is None
    assert StartupFloor.from_dict({"tests": {"t06": {"band_s": 0.1}}}) is None


def test_each_size_is_measured_once_per_meter(engine_cache: Path, judge_config: JudgeConfig,
                                              cpu_sandbox: Sandbox) -> None:
    request, result = judged(engine_cache, judge_config, ["t01", "t02"])  # one size, two tests
    meter, counting = FloorMeter(), Counting(cpu_sandbox)
    first = meter.measure(request, result, engine_cache, judge_config, counting)
    again = meter.measure(request, result, engine_cache, judge_config, counting)
    # a warm-up, then the runs; t02 has t01's size; the second judging reuses both
    assert counting.runs == FLOOR_RUNS + 1
    assert first is not None and again is not None and first.tests == again.tests
    assert first.tests["t01"] == first.tests["t02"]


def test_a_floor_that_cannot_run_leaves_the_verdicts_and_says_why(
        engine_cache: Path, judge_config: JudgeConfig, cpu_sandbox: Sandbox) -> None:
    request, result = judged(engine_cache, judge_config, ["t07"])
    floor = FloorMeter().measure(request, result, engine_cache, judge_config,
                                 FailingRuns(cpu_sandbox))
    assert floor is not None and floor.tests == {}
    assert floor.error is not None and "cgroup" in floor.error
    assert result.tests[0].verdict == Verdict.AC


def test_no_floor_without_a_whole_program_time(engine_cache: Path, judge_config: JudgeConfig,
                                               cpu_sandbox: Sandbox) -> None:
    """A kernel's time is solve() alone; a compile error ran nothing."""
    assert [n for n, facts in LANGUAGES.items() if has_floor(facts)] == ["cuda-program",
                                                                         "c-program"]
    assert not has_floor(None)
    request = JudgeRequest("c-program", {"hw4.c": b"int main( {"}, "hw4-mini", ["t07"])
    result = judge(request, engine_cache, config=judge_config)
    assert FloorMeter().measure(request, result, engine_cache, judge_config, cpu_sandbox) is None


def test_the_calibration_program_is_packaged() -> None:
    source = floor_source()
    assert b"cudaFree(0)" in source and b"fread" in source and b"fwrite" in source


@pytest.mark.gpu
def test_the_cuda_floor_is_below_a_real_cuda_programs_time(engine_cache: Path,
                                                           judge_config: JudgeConfig,
                                                           machine: Machine) -> None:
    """Per test the two differ by the program's own work (device memory, copies, the kernel):
    tens of ms on these shapes, near the start-up's noise, so the order is held over the sum."""
    tests = ["t01", "t04", "t05", "t10"]
    request = JudgeRequest("cuda-program", load_case("cuda-correct").files, "hw4-mini", tests)
    result = judge(request, engine_cache, config=judge_config)
    assert [t.verdict for t in result.tests] == [Verdict.AC] * len(tests)
    floor = FloorMeter().measure(request, result, engine_cache, judge_config,
                                 BwrapSandbox.for_machine(machine, gpu=True))
    assert floor is not None and floor.error is None, floor
    assert all(floor.tests[t].seconds > 0 for t in tests)
    total = floor.total(tests)
    assert total is not None and total < result.total_seconds, (floor, result.total_seconds)
