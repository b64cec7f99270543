"""Hidden tests: an assignment's secret seed goes to workers in JudgePayload.seed and
nowhere else (no log line, no page, no API answer), and its visibility rule cuts what a student
sees of a result before the due time: verdicts only, or nothing; after it, and for TAs, all."""

from __future__ import annotations

import logging
from datetime import timedelta

from app.course import assignment_config, assignments
from app.db.models import Assignment, Submission, utcnow
from app.results import detail
from app.submissions import jobs, recording
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import judged_result, live_worker

C = ("hw4.c", b"int main(void) { return 0; }\n")


def hidden(db, settings, visibility="all", due=None) -> Assignment:
    config = assignment_config.Config(name=settings.suite, suite=settings.suite,
                                      visibility=visibility, hidden_tests=True, due_at=due)
    return assignment_config.apply(db, None, config, settings.suite)


def submitted(client, db, account) -> Submission:
    response = client.post("/api/submissions", headers=account.headers,
                           data={"language": "c-program"}, files=[("files", C)])
    assert response.status_code == 202, response.text
    return db.get(Submission, response.json()["id"])


def test_the_secret_seed_reaches_workers_only(client, db, settings, student, caplog):
    live_worker(db)
    public = jobs.judge_payload(submitted(client, db, student), settings)
    assert public.seed is None  # the suite's own seeds: what `testcase gen` makes
    seed = hidden(db, settings).secret_seed
    assert seed is not None
    caplog.set_level(logging.DEBUG)
    sub = submitted(client, db, student)
    payload = jobs.judge_payload(sub, settings)
    assert payload.seed == seed and str(seed) not in repr(payload)
    recording.record_result(db, settings, sub.id, sub.attempt, judged_result(3, 0.2, 3))
    seen = [client.get(f"/api/submissions/{sub.id}", headers=student.headers).text,
            client.get(f"/submissions/{sub.id}", headers=HTML | student.headers).text,
            client.get("/api/assignments", headers=student.headers).text,
            client.get("/api/admin/assignments", headers=student.headers).text,
            caplog.text]
    assert not [text for text in seen if str(seed) in text]


def test_verdicts_only_before_the_due_time_then_everything(client, db, settings, student, ta):
    live_worker(db)
    rule = hidden(db, settings, "verdicts", "2099-01-01T00:00Z")
    sub = submitted(client, db, student)
    recording.record_result(db, settings, sub.id, sub.attempt, judged_result(2, 0.25, 3))
    body = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    assert body["shown"] == "verdicts" and body["verdict"] == "WA" and body["passed"] == 2
    assert [(t["id"], t["verdict"], t.get("seconds"), t.get("max_error")) for t in
            body["tests"]] == [("t01", "AC", None, None), ("t02", "AC", None, None),
                               ("t03", "WA", None, None)]
    assert body["time"] is None and body["feedback"] is None
    login(client, student)
    page = client.get(f"/submissions/{sub.id}", headers=HTML).text
    assert ">WA<" in page and " · time " not in page and "refined times follow" not in page
    as_ta = client.get(f"/api/submissions/{sub.id}", headers=ta.headers).json()
    assert as_ta["tests"][0]["seconds"] == 0.25
    rule.due_at = utcnow() - timedelta(minutes=1)
    db.commit()
    after = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    assert after["shown"] == "all" and after["tests"][0]["seconds"] == 0.25


def test_nothing_until_the_due_time_in_the_api_the_list_and_the_page(client, db, settings,
                                                                      student):
    live_worker(db)
    hidden(db, settings, "none", "2099-01-01T00:00Z")
    sub = submitted(client, db, student)
    recording.record_result(db, settings, sub.id, sub.attempt, judged_result(3, 0.25, 3))
    body = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    assert (body["status"], body["verdict"], body["score"], body["tests"]) == (
        "done", None, None, [])
    mine = client.get("/api/submissions/mine", headers=student.headers).json()
    assert (mine[0]["verdict"], mine[0]["score"], mine[0]["time"]) == (None, None, None)
    login(client, student)
    page = client.get(f"/submissions/{sub.id}", headers=HTML).text
    assert "t01" not in page and ">AC<" not in page
    assert "this assignment shows no results" in page
    board = client.get("/api/scoreboard", headers=student.headers)
    assert board.status_code == 403 and "after the due time" in board.json()["detail"]


def test_a_live_stream_update_is_cut_for_students_like_the_page():
    full = {"status": "done", "verdict": "AC", "shown": "none", "tests": [{"id": "t01"}],
            "error": "internal", "flags": []}
    assert detail.view_for(full, is_ta=False)["tests"] == []
    assert detail.view_for(full, is_ta=False)["verdict"] is None
    assert detail.view_for(full, is_ta=True) is full


def test_testcase_gen_and_a_fresh_course_keep_the_public_seeds(db, settings):
    first = assignments.in_term(db, settings.suite)[0]
    assert first.secret_seed is None and first.visibility == "all"
