"""Overlapping the verdict pass's tests (FLASHJUDGE_VERDICT_PARALLEL=k), judged for real with
bubblewrap and gcc: it must change no verdict, a TLE stays a TLE, and a test near its limit (or
failed) is run again alone, its alone run the one reported."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from flashjudge.contract import JudgeResult
from tests.worker.hostile_corpus import HostileCase, all_cases, load_case
from worker.pipeline import JudgeEvent, JudgeRequest, judge
from worker.running.overlap import Overlap
from worker.sandbox.bwrap import Sandbox
from worker.settings import WorkerSettings

MINI = ["t01", "t02", "t03", "t05", "t06", "t07"]  # hw4-mini tests a correct run passes quickly


def _judge(case: HostileCase, cache: Path, sandbox: Sandbox, overlap: Overlap,
           tests: list[str] | None = None, events: list[JudgeEvent] | None = None
           ) -> JudgeResult:
    """The case judged as a worker does, with `overlap`, on `tests` (default: the case's)."""
    if tests is not None:
        case = dataclasses.replace(case, tests=tuple(tests))
    suite = case.suite()
    config = WorkerSettings().judge_config(suite=suite, build_time_limit_s=case.build_time_limit_s,
                                           overlap=overlap)
    if case.memory_bytes is not None:
        config.base_memory_bytes = case.memory_bytes
    request = JudgeRequest(case.language, case.files, suite.name, case.test_ids(suite))
    return judge(request, cache, on_event=events.append if events is not None else None,
                 sandbox=sandbox, config=config)


def _verdicts(result: JudgeResult) -> list[tuple[str, str]]:
    return [(t.id, str(t.verdict)) for t in result.tests]


def _starts(events: list[JudgeEvent]) -> dict[str, int]:
    """How many times each test was started (a rerun alone starts it again)."""
    counts: dict[str, int] = {}
    for event in events:
        if event.kind == "test-start" and event.test_id:
            counts[event.test_id] = counts.get(event.test_id, 0) + 1
    return counts


@pytest.mark.parametrize("case", [c for c in all_cases() if not c.gpu], ids=lambda c: c.name)
def test_four_at_once_gives_every_hostile_program_the_same_verdicts(
        case: HostileCase, engine_cache: Path, cpu_sandbox: Sandbox) -> None:
    alone = _judge(case, engine_cache, cpu_sandbox, Overlap(k=1))
    overlapped = _judge(case, engine_cache, cpu_sandbox, Overlap(k=4))
    assert _verdicts(overlapped) == _verdicts(alone)
    assert set(v for _, v in _verdicts(overlapped)) <= set(case.verdicts)


def test_a_correct_program_gets_the_same_verdicts_and_score_four_at_once(
        engine_cache: Path, cpu_sandbox: Sandbox) -> None:
    case = load_case("correct-seq")
    alone = _judge(case, engine_cache, cpu_sandbox, Overlap(k=1), MINI)
    events: list[JudgeEvent] = []
    overlapped = _judge(case, engine_cache, cpu_sandbox, Overlap(k=4, alone_share=1.0), MINI,
                        events)
    assert _verdicts(overlapped) == _verdicts(alone) == [(t, "AC") for t in MINI]
    assert (overlapped.score, overlapped.passed) == (alone.score, alone.passed)
    assert _starts(events) == {t: 1 for t in MINI}  # all passed well within: none rerun
    done = [e.test_id for e in events if e.kind == "test-done" and e.test_id is not None]
    assert sorted(done) == sorted(MINI)  # one final result per test, whatever the order


def test_a_test_that_times_out_while_overlapped_is_rerun_alone_and_still_tle(
        engine_cache: Path, cpu_sandbox: Sandbox) -> None:
    case = dataclasses.replace(load_case("correct-seq"), tests=tuple(MINI))
    suite = case.suite()
    tight = dataclasses.replace(suite, tests=[
        dataclasses.replace(suite.test(t), time_limit_s=0.001 if t == "t05" else 10.0)
        for t in MINI])
    events: list[JudgeEvent] = []
    config = WorkerSettings().judge_config(suite=tight, overlap=Overlap(k=4, alone_share=1.0))
    result = judge(JudgeRequest(case.language, case.files, tight.name, MINI), engine_cache,
                   on_event=events.append, sandbox=cpu_sandbox, config=config)
    verdicts = dict(_verdicts(result))
    assert verdicts.pop("t05") == "TLE"
    assert set(verdicts.values()) == {"AC"}
    assert _starts(events)["t05"] == 2  # overlapped, then alone: the alone run is reported


def test_a_test_near_its_limit_is_rerun_alone(engine_cache: Path, cpu_sandbox: Sandbox) -> None:
    case = load_case("correct-seq")
    events: list[JudgeEvent] = []
    result = _judge(case, engine_cache, cpu_sandbox, Overlap(k=4, alone_share=1e-9), MINI,
                    events)
    assert _verdicts(result) == [(t, "AC") for t in MINI]
    starts = _starts(events)
    assert starts.pop(MINI[0]) == 1  # the first test runs alone anyway
    assert set(starts.values()) == {2}  # every overlapped one was "near" (any time): rerun alone


def test_overlap_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHJUDGE_VERDICT_PARALLEL", "4")
    monkeypatch.setenv("FLASHJUDGE_VERDICT_ALONE_SHARE", "0.4")
    overlap = WorkerSettings().judge_config().overlap
    assert (overlap.k, overlap.alone_share) == (4, 0.4)
    monkeypatch.delenv("FLASHJUDGE_VERDICT_PARALLEL")
    assert WorkerSettings().judge_config().overlap.k == 1  # off unless asked
