"""The start-up floor on the service side: stored from a worker's result, shown per test and in
total on the result page and in the API as the time above it; ranks keep the whole-program time."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pytest

from app.db.models import Submission
from app.submissions import recording, refinement
from flashjudge.contract.floor import FloorPoint, StartupFloor
from tests.app.submissions.test_refinement import report
from tests.app.utils.factories import judged_result, make_submission
from tests.worker.hostile_corpus import load_case
from worker.pipeline import JudgeRequest, judge
from worker.settings import WorkerSettings
from worker.timing.floor import FloorMeter

WHAT = "a program that reads the test's input, writes an output of the right size and exits"


def with_floor(result: dict[str, Any], floors: dict[str, float],
               error: str | None = None) -> dict[str, Any]:
    """A result as a worker sends it, with its `floor` block."""
    block = StartupFloor({i: FloorPoint(s, 0.001, 3) for i, s in floors.items()}, WHAT, error)
    return {**result, "floor": block.to_dict()}


def reload(db, sub_id: int) -> Submission:
    db.expire_all()
    return db.get(Submission, sub_id)


@pytest.fixture(scope="module")
def judged_with_floor(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A c-program judged for real (gcc, bubblewrap) and its floor measured as a worker does."""
    cache = tmp_path_factory.mktemp("floor-cache")
    config = WorkerSettings().judge_config()
    request = JudgeRequest("c-program", load_case("correct-seq").files, "hw4-mini",
                           ["t06", "t07"])
    result = judge(request, cache, config=config)
    floor = FloorMeter().measure(request, result, Path(cache), config)
    assert floor is not None and floor.error is None
    result.extra["floor"] = floor.to_dict()
    return result.to_dict()


def test_a_judged_c_programs_floor_is_kept_per_test_and_in_total(
        client, db, settings, student, judged_with_floor) -> None:
    sub = make_submission(db, student, language="c-program")
    assert recording.record_result(db, settings, sub.id, 1, judged_with_floor)
    sent = judged_with_floor["floor"]["tests"]
    body = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    for test in body["tests"]:
        assert test["floor_s"] == pytest.approx(sent[test["id"]]["seconds"])
        assert test["above_floor_s"] == pytest.approx(test["seconds"] - test["floor_s"])
    total = sum(p["seconds"] for p in sent.values())
    assert body["floor"]["total_s"] == pytest.approx(total)
    assert body["floor"]["above_s"] == pytest.approx(body["time"] - total)
    assert body["floor"]["runs"] == 3 and body["floor"]["error"] is None
    assert reload(db, sub.id).floor_time == pytest.approx(total)


def test_the_page_shows_the_time_above_the_floor_and_says_ranks_use_the_whole_time(
        client, db, settings, student) -> None:
    sub = make_submission(db, student, language="c-program")
    recording.record_result(db, settings, sub.id, 1, with_floor(
        judged_result(2, 0.25, total=2), {"t01": 0.21, "t02": 0.22}))
    page = client.get(f"/submissions/{sub.id}", headers=student.headers).text
    assert 'id="floor-total">0.430 s' in page and 'id="above-floor">0.0700 s' in page
    assert "Above start-up</th>" in page
    assert '<td class="above-floor" title="floor 0.210 s">0.0400</td>' in page
    assert WHAT in html.unescape(page) and "Ranks use the whole-program time" in page
    board = client.get("/api/scoreboard", headers=student.headers).json()
    assert board["rows"][0]["time"] == pytest.approx(0.5)  # the whole time, floor included


def test_refined_times_move_the_time_above_the_floor(client, db, settings, student) -> None:
    sub = make_submission(db, student, language="c-program")
    recording.record_result(db, settings, sub.id, 1, with_floor(
        judged_result(2, 0.25, total=2), {"t01": 0.21, "t02": 0.21}))
    refinement.record_timing(db, sub.id, 1, report(0.23, 0.005, ["t01", "t02"]))
    body = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    assert [t["above_floor_s"] for t in body["tests"]] == [pytest.approx(0.02)] * 2
    assert body["floor"]["above_s"] == pytest.approx(0.46 - 0.42)


def test_without_a_floor_the_page_shows_whole_program_times_only(client, db, settings,
                                                                 student) -> None:
    """cuda-kernel results and those of workers from before the floor carry no block."""
    sub = make_submission(db, student, language="c-program")
    recording.record_result(db, settings, sub.id, 1, judged_result(2, 0.25, total=2))
    body = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    assert body["floor"] is None and body["tests"][0]["above_floor_s"] is None
    page = client.get(f"/submissions/{sub.id}", headers=student.headers).text
    assert 'id="floor"' not in page and "Above start-up" not in page


def test_a_floor_the_worker_could_not_measure_is_said_so(client, db, settings, student) -> None:
    sub = make_submission(db, student, language="c-program")
    recording.record_result(db, settings, sub.id, 1, with_floor(
        judged_result(2, 0.25, total=2), {}, error="FloorError: the calibration program failed"))
    body = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    assert body["floor"]["total_s"] is None and "calibration" in body["floor"]["error"]
    page = client.get(f"/submissions/{sub.id}", headers=student.headers).text
    assert "could not be measured" in page and "Above start-up" not in page


def test_a_floor_missing_for_some_test_gives_no_total(client, db, settings, student) -> None:
    sub = make_submission(db, student, language="c-program")
    recording.record_result(db, settings, sub.id, 1, with_floor(
        judged_result(2, 0.25, total=2), {"t01": 0.2}))
    body = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    assert body["floor"]["total_s"] is None and body["floor"]["above_s"] is None
    assert [t["floor_s"] for t in body["tests"]] == [0.2, None]
