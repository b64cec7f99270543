"""The refinement phase on the service side: asked for when a result is recorded, its times
replace the first ones (with their band) only for the attempt they belong to."""

from __future__ import annotations

import json

import redis

from app.db.models import Submission
from app.submissions import recording, refinement
from tests.app.utils.factories import judged_result, make_submission


def reload(db, sub_id: int) -> Submission:
    db.expire_all()
    return db.get(Submission, sub_id)


def refine_messages(settings) -> list[dict]:
    """The refine_timing payloads waiting on the cpu queue of this backend's broker."""
    if settings.broker_url:
        client = redis.Redis.from_url(settings.broker_url)  # a list per priority
        raw = [m for key in client.scan_iter(b"cpu*") for m in client.lrange(key, 0, -1)]
        messages = [json.loads(m) for m in raw]
    else:
        paths = (settings.data_dir / "broker" / "queue").glob("*.cpu.msg")
        messages = [json.loads(p.read_text()) for p in paths]
    return [m for m in messages if m["headers"]["task"] == "flashjudge.refine_timing"]


def report(stat: float, band: float, test_ids: list[str]) -> dict:
    estimate = {"statistic": stat, "se": band / 1.96, "low": stat - band, "high": stat + band,
                "n": 3, "method": "median"}
    return {"tests": [{"id": t, "samples": [], "estimate": estimate, "stop": "settled"}
                      for t in test_ids],
            "total": {**estimate, "statistic": stat * len(test_ids), "low": stat * len(test_ids)
                      - band, "high": stat * len(test_ids) + band},
            "first_pass_s": 1.0, "budget_s": 0.5, "spent_s": 0.4, "runs": 4,
            "stopped": "settled", "cost_ratio": 1.4}


def test_recording_a_result_with_passed_tests_asks_for_refined_times(db, settings, student):
    sub = make_submission(db, student, language="c-program")
    assert recording.record_result(db, settings, sub.id, 1, judged_result(2, 0.25, total=3))
    messages = refine_messages(settings)
    assert len(messages) == 1


def test_refined_times_replace_the_first_ones_with_their_band(db, settings, student):
    sub = make_submission(db, student, language="c-program")
    recording.record_result(db, settings, sub.id, 1, judged_result(2, 0.25, total=3))
    assert refinement.record_timing(db, sub.id, 1, report(0.2, 0.01, ["t01", "t02"]))
    sub = reload(db, sub.id)
    seconds = {t.test_id: t.seconds for t in sub.tests}
    assert seconds["t01"] == 0.2 and seconds["t02"] == 0.2 and seconds["t03"] == 0.25  # WA: kept
    assert sub.total_time == 0.65 and sub.result is not None
    assert abs(sub.result["timing"]["total_band_s"] - 0.01) < 1e-9
    assert {t.test_id: (t.detail or {}).get("first_seconds") for t in sub.tests}["t01"] == 0.25


def test_a_refinement_of_an_older_attempt_is_ignored(db, settings, student):
    sub = make_submission(db, student, language="c-program", attempt=2)
    recording.record_result(db, settings, sub.id, 2, judged_result(2, 0.25, total=2))
    assert not refinement.record_timing(db, sub.id, 1, report(0.1, 0.01, ["t01", "t02"]))
    assert reload(db, sub.id).total_time == 0.5


def test_a_failed_refinement_leaves_the_first_times_and_says_why(db, settings, student):
    sub = make_submission(db, student, language="c-program")
    recording.record_result(db, settings, sub.id, 1, judged_result(2, 0.25, total=2))
    assert refinement.record_timing(db, sub.id, 1, {"error": "SystemFailure: no longer builds"})
    sub = reload(db, sub.id)
    assert sub.total_time == 0.5 and sub.result is not None
    assert "no longer builds" in sub.result["timing"]["error"]


def test_the_api_and_the_result_page_show_each_band_and_the_totals(client, db, settings, student):
    sub = make_submission(db, student, language="c-program")
    recording.record_result(db, settings, sub.id, 1, judged_result(2, 0.25, total=3))
    page = client.get(f"/submissions/{sub.id}", headers=student.headers).text
    assert "refined times follow" in page and "&plusmn;" not in page
    refinement.record_timing(db, sub.id, 1, report(0.000196, 0.00001, ["t01", "t02"]))
    body = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    assert abs(body["timing"]["total_band_s"] - 0.00001) < 1e-12
    tests = {t["id"]: t for t in body["tests"]}
    assert abs(tests["t01"]["band_s"] - 0.00001) < 1e-12 and tests["t01"]["runs"] == 3
    assert tests["t01"]["first_seconds"] == 0.25 and tests["t03"]["band_s"] is None
    page = client.get(f"/submissions/{sub.id}", headers=student.headers).text
    assert "0.000196 <span" in page  # a kernel's time, not "0.000"
    assert "&plusmn; 0.0000100" in page and 'id="band"' in page


def test_the_scoreboard_shows_each_tests_band_once_refined(client, db, settings, student):
    sub = make_submission(db, student, language="c-program")
    recording.record_result(db, settings, sub.id, 1, judged_result(2, 0.25, total=3))
    board = client.get("/api/scoreboard", headers=student.headers).json()
    assert board["rows"][0]["tests"]["t01"]["band_s"] is None  # one run so far
    refinement.record_timing(db, sub.id, 1, report(0.2, 0.012, ["t01", "t02"]))
    board = client.get("/api/scoreboard", headers=student.headers).json()
    assert abs(board["rows"][0]["tests"]["t01"]["band_s"] - 0.012) < 1e-9
    page = client.get("/scoreboard", headers=student.headers).text
    assert ">0.200 <span class=\"small\">&plusmn;0.0120</span></td>" in page
