"""judge() end to end on the c-program track: CE, SE, events, every test run."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from flashjudge.contract import Verdict
from testcases.suite import load_suite
from tests.worker.hostile_corpus import load_case
from worker.pipeline import JudgeConfig, JudgeEvent, JudgeRequest, judge
from worker.sandbox.bwrap import BwrapSandbox, RunResult, RunStatus, Sandbox

CORRECT = load_case("correct-seq").files


class BrokenRuns:
    """The real sandbox for builds, a failing one (SYSTEM_ERROR) for test runs: our fault. A
    double of the Sandbox protocol: judge() takes it as it is."""

    insecure = False

    def __init__(self, real: Sandbox) -> None:
        self.real = real

    def run(self, argv: list[str], **kwargs: Any) -> RunResult:
        if argv[0] == "./hw4":
            return RunResult(RunStatus.SYSTEM_ERROR, None, None, 0.0, "", "", None,
                             "cannot create the run's cgroup")
        return self.real.run(argv, **kwargs)


def test_compile_error_fails_every_test_with_the_log(engine_cache: Path,
                                                     cpu_sandbox: Sandbox) -> None:
    request = JudgeRequest("c-program", {"hw4.c": b"int main( { return 0; }"}, "hw4-mini",
                           ["t06", "t07"])
    result = judge(request, engine_cache, sandbox=cpu_sandbox)
    assert not result.compile.ok
    assert "error" in result.compile.log
    assert [t.verdict for t in result.tests] == [Verdict.CE, Verdict.CE]
    assert (result.score, result.max_score) == (0, 20)  # hw4-mini: 10 points per test
    assert result.passed == 0 and result.system_error is None


def test_missing_sources_are_a_compile_error_not_a_crash(engine_cache: Path,
                                                         cpu_sandbox: Sandbox) -> None:
    request = JudgeRequest(None, {"README": b"hi"}, "hw4-mini", ["t07"])
    result = judge(request, engine_cache, sandbox=cpu_sandbox)
    assert not result.compile.ok and "cannot tell the language" in result.compile.log


def test_sandbox_failure_is_a_system_error_to_retry(engine_cache: Path,
                                                    cpu_sandbox: Sandbox) -> None:
    request = JudgeRequest("c-program", CORRECT, "hw4-mini", ["t07"])
    result = judge(request, engine_cache, sandbox=BrokenRuns(cpu_sandbox))
    assert result.tests[0].verdict == Verdict.SE
    assert result.system_error and "cgroup" in result.system_error


def test_every_test_runs_and_events_arrive_in_order(engine_cache: Path,
                                                    cpu_sandbox: Sandbox) -> None:
    events: list[JudgeEvent] = []
    suite = load_suite("hw4-mini")
    slow = dataclasses.replace(suite.test("t10"), time_limit_s=0.2)  # the baseline is too slow
    small = dataclasses.replace(suite, tests=[suite.test("t06"), slow, suite.test("t07")])
    request = JudgeRequest("c-program", CORRECT, "hw4-mini", ["t06", "t10", "t07"])
    result = judge(request, engine_cache, events.append, cpu_sandbox, JudgeConfig(suite=small))
    assert [t.verdict for t in result.tests] == [Verdict.AC, Verdict.TLE, Verdict.AC]
    assert (result.score, result.max_score, result.passed) == (20, 30, 2)
    kinds = [(e.kind, e.test_id) for e in events]
    assert kinds == [("compile", None), ("prepare", None), ("test-start", "t06"),
                     ("test-done", "t06"), ("test-start", "t10"), ("test-done", "t10"),
                     ("test-start", "t07"), ("test-done", "t07")]
    assert events[-1].result is result.tests[-1]


def test_result_dict_keeps_the_contract_keys(engine_cache: Path, cpu_sandbox: Sandbox) -> None:
    request = JudgeRequest("c-program", CORRECT, "hw4-mini", ["t07"])
    data = judge(request, engine_cache, sandbox=cpu_sandbox).to_dict()
    assert data["compile"]["ok"] is True and isinstance(data["compile"]["log"], str)
    assert (data["score"], data["max_score"], data["passed"]) == (10, 10, 1)
    test = data["tests"][0]
    assert test["id"] == "t07" and test["verdict"] == "AC"
    assert isinstance(test["seconds"], float) and 0 <= test["max_error"] < 5e-3


def test_insecure_mode_marks_every_result(engine_cache: Path) -> None:
    unprotected = BwrapSandbox(insecure=True, bwrap="/nonexistent/bwrap")  # no bwrap: insecure
    request = JudgeRequest("c-program", CORRECT, "hw4-mini", ["t07"])
    result = judge(request, engine_cache, sandbox=unprotected)
    assert result.insecure and result.to_dict()["insecure"] is True
    assert result.notes[0].startswith("INSECURE")
    assert all(t.message.startswith("INSECURE") for t in result.tests)
