"""A result names its GPU model; rejudges go to that model's queue; boards rank within a model."""

from __future__ import annotations

from app.db.models import Submission
from app.submissions import recording
from tests.app.utils.factories import judged_result, make_submission, make_user
from tests.app.utils.queued import waiting

RTX, GTX = "NVIDIA GeForce RTX 3070", "NVIDIA GeForce GTX 1080"


def judged_on(db, settings, account, gpu: str | None, passed: int = 10,
              seconds: float = 0.5) -> Submission:
    sub = make_submission(db, account, language="cuda-program")
    result = judged_result(passed, seconds)
    result["worker"] = {"hostname": "gpu0@node", "gpu": gpu, "seconds": 3.0}
    assert recording.record_result(db, settings, sub.id, 1, result)
    db.refresh(sub)
    return sub


def test_the_result_records_the_model_it_was_judged_on(db, settings, student):
    assert judged_on(db, settings, student, RTX).gpu_model == RTX
    assert judged_on(db, settings, student, None).gpu_model is None  # the CPU track


def test_the_submission_says_which_model_judged_it(client, db, settings, student):
    on_rtx = judged_on(db, settings, student, RTX)
    body = client.get(f"/api/submissions/{on_rtx.id}", headers=student.headers).json()
    assert body["gpu_model"] == RTX


def test_a_rejudge_waits_for_a_worker_of_the_same_model(client, db, settings, student, ta):
    on_rtx = judged_on(db, settings, student, RTX)
    unjudged = make_submission(db, student, language="cuda-program")
    for sub in (on_rtx, unjudged):
        response = client.post(f"/api/admin/submissions/{sub.id}/rejudge", headers=ta.headers)
        assert response.status_code == 202
    [(task, kwargs)] = waiting(settings, "gpu.rtx-3070")
    assert task == "flashjudge.judge"
    assert kwargs["payload"]["submission_id"] == on_rtx.id
    assert kwargs["payload"]["gpu_model"] == RTX
    first = [k["payload"]["submission_id"] for _, k in waiting(settings, "gpu")]
    assert first == [unjudged.id]  # never judged: any GPU worker may take it


def test_the_board_ranks_within_one_model_and_lists_the_models(client, db, settings, ta):
    alice, bob = make_user(db, "alice"), make_user(db, "bob")
    judged_on(db, settings, alice, GTX, 10, 0.9)
    judged_on(db, settings, alice, RTX, 10, 0.2)
    judged_on(db, settings, bob, RTX, 10, 0.3)
    judged_on(db, settings, bob, RTX, 9, 0.1)
    on_rtx = client.get("/api/scoreboard", params={"gpu_model": RTX}, headers=ta.headers).json()
    assert on_rtx["gpu_model"] == RTX and on_rtx["gpu_models"] == [RTX, GTX]
    assert [(r["user"], r["time"]) for r in on_rtx["rows"]] == [("alice", 2.0), ("bob", 3.0)]
    on_gtx = client.get("/api/scoreboard", params={"gpu_model": GTX}, headers=ta.headers).json()
    assert [(r["user"], r["time"]) for r in on_gtx["rows"]] == [("alice", 9.0)]
    everyone = client.get("/api/scoreboard", headers=ta.headers).json()
    assert everyone["gpu_model"] is None and len(everyone["rows"]) == 2
    csv = client.get("/api/scoreboard.csv", params={"gpu_model": GTX}, headers=ta.headers).text
    assert "alice" in csv and "bob" not in csv
