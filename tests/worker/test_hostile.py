"""The hostile corpus (tests/hostile/), judged for real: bubblewrap, cgroups, gcc (and nvcc + a GPU
for the gpu-marked cases). Each program must get its verdict, leak nothing, and leave the machine
able to judge the next submission normally."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from flashjudge.contract import JudgeResult
from tests.worker.hostile_corpus import HostileCase, all_cases, load_case
from worker.languages.arch import supported_archs
from worker.pipeline import JudgeRequest, judge
from worker.sandbox.bwrap import Sandbox
from worker.settings import WorkerSettings

SECRET = "hostile-secret-7f3a"  # planted in the worker's environment: must never reach a program
CASES = all_cases()


def _judge(case: HostileCase, cache: Path, sandbox: Sandbox | None) -> JudgeResult:
    """Judged as a worker does: its machine from the environment, the case's suite and limits."""
    config = WorkerSettings().judge_config(suite=case.suite(),
                                           build_time_limit_s=case.build_time_limit_s)
    if case.memory_bytes is not None:
        config.base_memory_bytes = case.memory_bytes
    suite = case.suite()
    request = JudgeRequest(case.language, case.files, suite.name, case.test_ids(suite))
    return judge(request, cache, sandbox=sandbox, config=config)


def _processes_named(name: str) -> list[int]:
    pids = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == name:
                pids.append(int(comm.parent.name))
        except OSError:
            continue
    return pids


def _check(case: HostileCase, result: JudgeResult) -> None:
    """Every verdict acceptable, and every extra condition of expected.toml holds."""
    got = {t.id: str(t.verdict) for t in result.tests}
    assert set(got.values()) <= set(case.verdicts), f"{case.name}: {got}\n{result.tests}"
    assert result.system_error is None
    checks = case.checks
    for path in checks.get("absent", []):
        assert not Path(path).exists(), f"{case.name} wrote {path} on the host"
    assert checks.get("log_must_contain", "") in result.compile.log
    for text in [*checks.get("log_must_not_contain", []), SECRET]:
        assert text not in result.compile.log, f"{case.name}: build log shows {text!r}"
    for test in result.tests:
        for text in [checks.get("stderr_must_not_contain"), SECRET]:
            if text:
                assert text not in test.stderr_tail + test.stdout_tail, f"{case.name}: {text!r}"
        if "message_contains" in checks:
            assert checks["message_contains"] in test.message
        if "flag_contains" in checks:  # held for a TA: a holding flag says why
            assert any(checks["flag_contains"] in f["reason"] and f["holds"]
                       for f in test.timing_flags), test.timing_flags
    if "compile_notes_contain" in checks and "61" not in supported_archs():  # CUDA 13 and later
        assert checks["compile_notes_contain"] in " ".join(result.compile.notes)
    if "no_process_named" in checks:
        assert _processes_named(checks["no_process_named"]) == []


def _keep(name: str, result: JudgeResult) -> None:
    """With $FLASHJUDGE_RESULTS_DIR set (the GPU check), keep each judging's JSON for the report."""
    directory = os.environ.get("FLASHJUDGE_RESULTS_DIR")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        (Path(directory) / f"{name}.json").write_text(json.dumps(result.to_dict()))


def _run_case(case: HostileCase, cache: Path, sandbox: Sandbox | None,
              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHJUDGE_BROKER_URL", f"redis://:{SECRET}@127.0.0.1:6379/0")
    result = _judge(case, cache, sandbox)
    _keep(case.name, result)
    _check(case, result)
    if "then_judge" in case.checks:
        follow = load_case(case.checks["then_judge"])
        after = _judge(follow, cache, sandbox)
        _keep(f"{case.name}-then-{follow.name}", after)
        _check(follow, after)


@pytest.mark.parametrize("case", [c for c in CASES if not c.gpu], ids=lambda c: c.name)
def test_cpu_hostile_case(case: HostileCase, engine_cache: Path, cpu_sandbox: Sandbox,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    _run_case(case, engine_cache, cpu_sandbox, monkeypatch)


@pytest.mark.gpu
@pytest.mark.parametrize("case", [c for c in CASES if c.gpu], ids=lambda c: c.name)
def test_gpu_hostile_case(case: HostileCase, engine_cache: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    _run_case(case, engine_cache, None, monkeypatch)


def test_correct_c_solution_passes_the_whole_mini_suite(engine_cache: Path,
                                                        cpu_sandbox: Sandbox) -> None:
    case = load_case("correct-seq")
    request = JudgeRequest("c-program", case.files, "hw4-mini")
    result = judge(request, engine_cache, sandbox=cpu_sandbox)
    assert [str(t.verdict) for t in result.tests] == ["AC"] * 10
    assert (result.score, result.passed) == (100, 10)  # hw4-mini: 10 points a test
