"""What a student meets at upload: languages live workers judge, refusals that say why, the
deadline by the server's clock, and a queued submission that says what it waits for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from app.course import deadlines
from app.db.models import Submission, User, WorkerStatus, utcnow
from flashjudge.contract import LANGUAGES
from tests.app.utils.factories import live_worker

CUDA = ("hw4.cu", b"int main() { return 0; }\n")
C = ("hw4.c", b"int main(void) { return 0; }\n")


def submit(client, account, language, source):
    return client.post("/api/submissions", headers=account.headers, data={"language": language},
                       files=[("files", source)])


def count(db) -> int:
    db.expire_all()
    return db.scalar(select(func.count()).select_from(Submission))


def test_languages_lists_what_live_workers_judge(client, db, student):
    nothing = client.get("/api/languages", headers=student.headers).json()
    assert nothing["available"] == [] and nothing["offered"] == list(LANGUAGES)  # they wait
    live_worker(db)
    body = client.get("/api/languages", headers=student.headers).json()
    assert body["available"] == body["offered"] == ["c-program"]
    cuda = next(x for x in body["languages"] if x["name"] == "cuda-program")
    assert (cuda["available"], cuda["main_file"], cuda["workers"]) == (False, "hw4.cu", 0)
    assert cuda["reason"].startswith("no GPU worker is connected")


def test_triton_kernel_is_offered_only_where_a_heartbeat_names_it(client, db, student):
    languages = "/api/languages"
    live_worker(db, "gpu0@plain", ("cuda-program", "cuda-kernel"), gpu="NVIDIA H100")
    live_worker(db, "gpu1@old", (), gpu="NVIDIA H100")  # from before heartbeats listed languages
    body = client.get(languages, headers=student.headers).json()
    assert body["offered"] == ["cuda-program", "cuda-kernel"]
    triton = next(x for x in body["languages"] if x["name"] == "triton-kernel")
    assert (triton["available"], triton["workers"]) == (False, 0)
    assert submit(client, student, "triton-kernel", ("solve.py", b"def solve(*a): pass\n")
                  ).status_code == 409 and count(db) == 0
    live_worker(db, "gpu2@torch", ("cuda-program", "cuda-kernel", "triton-kernel"),
                gpu="NVIDIA H100")
    body = client.get(languages, headers=student.headers).json()
    assert body["offered"] == ["cuda-program", "cuda-kernel", "triton-kernel"]
    assert submit(client, student, "triton-kernel", ("solve.py", b"def solve(*a): pass\n")
                  ).status_code == 202


def test_a_cuda_upload_without_a_gpu_worker_is_refused_at_once(client, db, student):
    live_worker(db)
    response = submit(client, student, "cuda-program", CUDA)
    assert response.status_code == 409
    assert response.json() == {
        "field": "language",
        "detail": "no GPU worker is connected: cuda-program cannot be judged now "
                  "(languages that can be judged now: c-program)"}
    assert count(db) == 0
    assert submit(client, student, "c-program", C).status_code == 202


def test_with_no_worker_at_all_an_upload_is_accepted_and_says_it_waits(client, db, student):
    response = submit(client, student, "cuda-kernel", ("solve.cu", CUDA[1]))
    assert response.status_code == 202
    body = client.get(f"/api/submissions/{response.json()['id']}",
                      headers=student.headers).json()
    assert body["waiting"].startswith("waiting: no GPU worker is connected")


def test_a_queued_submission_whose_workers_left_says_it_waits(client, db, student):
    live_worker(db, "gpu0@node", ("cuda-program", "cuda-kernel"), gpu="NVIDIA H100")
    sub_id = submit(client, student, "cuda-program", CUDA).json()["id"]
    body = client.get(f"/api/submissions/{sub_id}", headers=student.headers).json()
    assert body["status"] == "queued" and body["waiting"] is None
    db.get(WorkerStatus, "gpu0@node").last_seen = utcnow() - timedelta(minutes=5)
    db.commit()
    body = client.get(f"/api/submissions/{sub_id}", headers=student.headers).json()
    assert body["waiting"].startswith("waiting: no GPU worker is connected")


def set_due(db, ta, due: datetime, policy: str, per_day: float = 0, cap: float = 100) -> None:
    deadlines.set_deadline(db, db.get(User, ta.id), "hw4-mini", due, policy, per_day, cap)


def test_after_the_deadline_a_refuse_policy_refuses_the_upload(client, db, student, ta):
    live_worker(db)
    set_due(db, ta, datetime.now(UTC) - timedelta(minutes=1), "refuse")
    response = submit(client, student, "c-program", C)
    assert response.status_code == 403 and response.json()["field"] == "deadline"
    assert "the deadline has passed and late submissions are refused" in response.json()["detail"]
    assert count(db) == 0
    assert submit(client, ta, "c-program", C).status_code == 202  # TAs still test the judge


def test_after_the_deadline_a_penalty_policy_marks_the_submission_late(client, db, student, ta):
    live_worker(db)
    set_due(db, ta, datetime.now(UTC) - timedelta(hours=25), "penalty", 10, 50)
    sub_id = submit(client, student, "c-program", C).json()["id"]
    body = client.get(f"/api/submissions/{sub_id}", headers=student.headers).json()
    assert (body["late"], body["late_penalty"]) == (True, 20.0)
    sub = db.get(Submission, sub_id)
    assert (sub.late, sub.late_penalty) == (True, 20.0)


def test_an_extension_lets_one_student_submit_on_time(client, db, student, other_student, ta):
    live_worker(db)
    due = datetime.now(UTC) - timedelta(minutes=1)
    set_due(db, ta, due, "refuse")
    response = client.put("/api/admin/deadlines/hw4-mini/extensions/alice", headers=ta.headers,
                          json={"due_at": (due + timedelta(days=1)).isoformat()})
    assert response.status_code == 200
    assert response.json()["extensions"][0]["username"] == "alice"
    mine = client.get("/api/deadline", headers=student.headers).json()
    assert mine["extended"] and not mine["late"] and mine["seconds_left"] > 0
    sub_id = submit(client, student, "c-program", C).json()["id"]
    assert db.get(Submission, sub_id).late is False
    assert submit(client, other_student, "c-program", C).status_code == 403


def test_the_deadline_api_is_for_tas_and_names_bad_fields(client, student, ta):
    body = {"due_at": "2026-12-01T23:59", "late_policy": "refuse"}
    assert client.put("/api/admin/deadlines/hw4-mini", headers=student.headers,
                      json=body).status_code == 403
    refused = client.put("/api/admin/deadlines/hw4-mini", headers=ta.headers, json=body)
    assert refused.status_code == 422 and refused.json()["field"] == "due_at"
    body["due_at"] = "2026-12-01T23:59+08:00"
    saved = client.put("/api/admin/deadlines/hw4-mini", headers=ta.headers, json=body).json()
    assert saved["due_at"] == "2026-12-01T15:59:00Z" and saved["late_policy"] == "refuse"
    assert client.get("/api/admin/deadlines/hw4-mini", headers=ta.headers).json() == saved
    assert client.delete("/api/admin/deadlines/hw4-mini", headers=ta.headers).json() == {
        "removed": True}
    assert client.get("/api/deadline", headers=student.headers).json()["due_at"] is None
