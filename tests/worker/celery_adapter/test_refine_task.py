"""The refine_timing task's body: the report of a real refinement, or the error that says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from flashjudge.contract import Attempt, JudgePayload, RefinePayload
from tests.worker.hostile_corpus import load_case
from worker.celery_adapter.refine import timing_of


@pytest.fixture
def cache_env(engine_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cache").symlink_to(engine_cache)
    monkeypatch.setenv("FLASHJUDGE_DATA_DIR", str(tmp_path))


def payload(files: dict[str, bytes], first: dict[str, dict]) -> RefinePayload:
    judged = JudgePayload(Attempt(7, 1, "k"), "c-program", files, "hw4-mini", list(first))
    return RefinePayload(judged, first)


def test_the_report_comes_back_as_plain_json(cache_env: None) -> None:
    job = payload(load_case("correct-seq").files, {"t01": {"seconds": 0.2, "passed": True}})
    report = timing_of(RefinePayload.from_dict(job.to_dict()))  # through the wire format
    assert set(report) >= {"tests", "total", "runs", "cost_ratio"}
    assert report["tests"][0]["id"] == "t01"


def test_a_refinement_that_cannot_run_says_why(cache_env: None) -> None:
    job = payload({"hw4.c": b"int main( {"}, {"t01": {"seconds": 0.2, "passed": True}})
    assert "no longer builds" in timing_of(job)["error"]
