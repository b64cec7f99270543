"""TA endpoints: roster import, users, all submissions, rejudge, status; students refused."""

from __future__ import annotations

import re
from datetime import UTC, timedelta

from sqlalchemy import func, select

from app.db.models import AuditLog, Submission, User, WorkerStatus, utcnow
from app.submissions import recording
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import judged_result, make_submission

ROSTER = ("username,display name,email,role\n"
          "s1,Student One,s1@x.edu,student\nta2,TA Two,t@x.edu,ta\n")


def user_count(db) -> int:
    db.expire_all()
    return db.scalar(select(func.count()).select_from(User))


def test_roster_import_creates_users_and_is_audited(client, db, ta):
    response = client.post("/api/admin/users/import", headers=ta.headers,
                           files={"roster": ("roster.csv", ROSTER.encode())})
    body = response.json()
    assert (body["created"], body["updated"]) == (["s1", "ta2"], [])
    assert [link["username"] for link in body["links"]] == ["s1", "ta2"]  # no password yet
    users = {u["username"]: u for u in client.get("/api/admin/users", headers=ta.headers).json()}
    assert users["ta2"]["role"] == "ta" and users["s1"]["display_name"] == "Student One"
    assert db.scalar(select(AuditLog.action)) == "import-roster"


def test_a_bad_roster_row_changes_nothing(client, db, ta):
    before = user_count(db)
    bad = ROSTER + "s3,Three,s3@x.edu,professor\n"
    response = client.post("/api/admin/users/import", headers=ta.headers,
                           files={"roster": ("roster.csv", bad.encode())})
    assert response.status_code == 422
    assert response.json()["detail"].startswith("roster row 3: role 'professor'")
    assert user_count(db) == before


def test_students_cannot_use_ta_endpoints(client, student):
    for method, path in [("get", "/api/admin/users"), ("get", "/api/admin/submissions"),
                         ("post", "/api/admin/rejudge-all"), ("get", "/api/admin/status"),
                         ("post", "/api/admin/scoreboard/freeze")]:
        response = getattr(client, method)(path, headers=student.headers)
        assert response.status_code == 403, path
        assert response.json()["detail"] == "only TAs may do this"


def test_rejudge_starts_a_new_attempt_and_clears_the_old_result(client, db, settings, student,
                                                                 ta):
    sub = make_submission(db, student)
    recording.record_result(db, settings, sub.id, 1, judged_result(10, 0.2))
    response = client.post(f"/api/admin/submissions/{sub.id}/rejudge", headers=ta.headers)
    assert response.status_code == 202
    body = client.get(f"/api/submissions/{sub.id}", headers=ta.headers).json()
    assert (body["status"], body["verdict"], body["attempt"], body["tests"]) == (
        "queued", None, 2, [])
    # the late result of attempt 1 must not overwrite the rejudge
    assert not recording.record_result(db, settings, sub.id, 1, judged_result(0, 0.2))


def test_rejudge_all_and_status(client, db, settings, student, ta):
    for _ in range(2):
        sub = make_submission(db, student)
        recording.record_result(db, settings, sub.id, 1, judged_result(3, 0.2))
    done = client.post("/api/admin/rejudge-all", headers=ta.headers).json()
    assert (done["count"], done["by_status"]) == (2, {"done": 2})
    assert done["message"].startswith("rejudging 2 submission(s) (2 done)")
    db.expire_all()
    recording.record_worker(db, {"hostname": "gpu0@node1", "gpu": "NVIDIA H100", "busy": True,
                                 "queues": "gpu", "languages": ["cuda-program", "cuda-kernel"],
                                 "job": {"submission_id": sub.id, "attempt": 2}})
    status = client.get("/api/admin/status", headers=ta.headers).json()
    assert status["queued"] == 1 and status["running"] == 1
    assert status["workers"][0] | {"last_seen": None, "seen_s_ago": None} == {
        "hostname": "gpu0@node1", "gpu": "NVIDIA H100", "queues": "gpu", "state": "busy",
        "languages": ["cuda-kernel", "cuda-program"], "current": f"submission {sub.id}",
        "slurm": "", "last_seen": None, "seen_s_ago": None}
    assert status["languages"]["cuda-program"] == ["gpu0@node1"]
    db.get(WorkerStatus, "gpu0@node1").last_seen = utcnow() - timedelta(minutes=5)
    db.commit()
    status = client.get("/api/admin/status", headers=ta.headers).json()
    assert status["workers"][0]["state"] == "offline"
    listed = client.get("/api/admin/submissions", headers=ta.headers).json()
    assert [s["attempt"] for s in listed] == [2, 2]
    db.expire_all()
    assert db.scalar(select(func.count()).select_from(Submission)) == 2


def test_status_names_a_workers_slurm_job_and_its_drain(client, db, ta):
    """A worker in a Slurm job: the TA page counts down to the job's end, and a draining
    worker says so instead of idle."""
    end = utcnow().replace(tzinfo=UTC).timestamp() + 3723
    recording.record_worker(db, {"hostname": "gpu0-job4812@gpu07", "gpu": "NVIDIA H100",
                                 "queues": "gpu", "languages": [],
                                 "state": "draining, its Slurm job ends in 540 s",
                                 "slurm": {"job_id": "4812", "node": "gpu07", "partition": "gpu",
                                           "gpus": ["2", "3"], "end_time": end}})
    [worker] = client.get("/api/admin/status", headers=ta.headers).json()["workers"]
    assert worker["state"] == "draining, its Slurm job ends in 540 s"
    assert re.fullmatch(r"job 4812 on gpu07 \(gpu\), GPUs 2,3, 1:02:0[0-3] left", worker["slurm"])
    login(client, ta)
    page = client.get("/admin", headers=HTML).text
    assert "<th>Slurm job</th>" in page and "job 4812 on gpu07 (gpu), GPUs 2,3, 1:02:0" in page
