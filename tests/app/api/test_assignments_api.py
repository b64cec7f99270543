"""Assignments at upload: a fresh course has one open assignment named after its
suite and nobody chooses; with several open a student names one (`assignment`, `flashjudge
submit --assignment`) and that assignment's suite, languages and deadline apply; a closed one
takes no student's upload."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from app.course import assignments, deadlines
from app.db.models import Assignment, Submission, utcnow
from app.submissions import dispatch, jobs
from tests.app.utils.factories import live_worker

C = ("hw4.c", b"int main(void) { return 0; }\n")
CU = ("hw4.cu", b"int main() { return 0; }\n")


def submit(client, account, assignment=None, language="c-program"):
    data = {"language": language} | ({"assignment": assignment} if assignment else {})
    return client.post("/api/submissions", headers=account.headers, data=data,
                       files=[("files", CU if language.startswith("cuda") else C)])


def add(db, settings, name, suite="hw4", **fields) -> Assignment:
    first = assignments.in_term(db, settings.suite)[0]
    row = Assignment(term_id=first.term_id, name=name, suite=suite, position=1, **fields)
    db.add(row)
    db.commit()
    return row


def test_a_fresh_course_has_one_open_assignment_and_nobody_chooses(client, db, student,
                                                                    settings):
    listed = client.get("/api/assignments", headers=student.headers).json()
    assert [(a["name"], a["suite"], a["open"]) for a in listed] == [
        (settings.suite, settings.suite, True)]
    live_worker(db)
    response = submit(client, student)
    assert response.status_code == 202
    body = client.get(f"/api/submissions/{response.json()['id']}",
                      headers=student.headers).json()
    assert (body["assignment"], body["suite"]) == (settings.suite, settings.suite)


def test_with_two_open_the_student_names_one_and_its_suite_and_deadline_apply(
        client, db, student, ta, settings):
    live_worker(db)
    challenge = add(db, settings, "challenge", suite="hw4", title="Kernel challenge")
    refused = submit(client, student)
    assert refused.status_code == 422
    assert refused.json()["detail"].startswith(
        f"several assignments are open: choose one of {settings.suite}, challenge")
    deadlines.set_deadline(db, None, challenge, deadlines.aware(utcnow() - timedelta(hours=1)))
    late = submit(client, student, "challenge")
    assert late.status_code == 403 and "challenge is due" in late.json()["detail"]
    ok = submit(client, student, settings.suite)
    assert ok.status_code == 202
    sub = db.get(Submission, ok.json()["id"])
    assert (sub.suite, sub.assignment.name) == (settings.suite, settings.suite)
    state = client.get("/api/deadline", params={"assignment": "challenge"},
                       headers=student.headers).json()
    assert state["assignment"] == "challenge" and state["closed"] is True
    unknown = submit(client, student, "hw9")
    assert unknown.status_code == 404
    assert unknown.json()["detail"] == (f"no assignment 'hw9'; this term has: "
                                        f"{settings.suite}, challenge")


def test_a_closed_assignment_takes_no_student_upload_but_a_ta_may_test_it(
        client, db, student, ta, settings):
    live_worker(db)
    add(db, settings, "practice", is_open=False)
    listed = client.get("/api/assignments", headers=student.headers).json()
    assert [a["name"] for a in listed] == [settings.suite]  # students see the open ones
    assert [a["name"] for a in client.get("/api/assignments", headers=ta.headers).json()] == [
        settings.suite, "practice"]
    refused = submit(client, student, "practice")
    assert refused.status_code == 403
    assert refused.json()["detail"] == "practice is closed: it takes no submissions"
    assert submit(client, ta, "practice").status_code == 202
    assert submit(client, student).status_code == 202  # the only open one


def test_an_assignment_takes_only_its_languages(client, db, student, settings):
    live_worker(db)
    only = assignments.in_term(db, settings.suite)[0]
    only.languages = "cuda-kernel"
    db.commit()
    refused = submit(client, student)
    assert refused.status_code == 422
    assert refused.json()["detail"] == f"{settings.suite} accepts cuda-kernel, not c-program"


def test_a_new_upload_supersedes_queued_work_of_the_same_assignment_only(
        client, db, student, settings):
    live_worker(db)
    add(db, settings, "challenge")
    first = submit(client, student, settings.suite).json()["id"]
    other = submit(client, student, "challenge").json()["id"]
    submit(client, student, settings.suite)
    db.expire_all()
    verdicts = dict(db.execute(select(Submission.id, Submission.verdict)).all())
    assert verdicts[first] == "SUPERSEDED" and verdicts[other] is None


def test_the_gpu_model_rule_sends_gpu_work_to_that_models_queue_only(client, db, student,
                                                                      settings):
    live_worker(db, "gpu0@node", ("cuda-program", "c-program"), gpu="NVIDIA H100 80GB HBM3")
    only = assignments.in_term(db, settings.suite)[0]
    only.gpu_model = "NVIDIA H100 80GB HBM3"
    db.commit()
    gpu = submit(client, student, language="cuda-program")
    cpu = submit(client, student, language="c-program")
    gpu_sub, cpu_sub = db.get(Submission, gpu.json()["id"]), db.get(Submission, cpu.json()["id"])
    assert dispatch.judge_queue(gpu_sub).startswith("gpu.") and "h100" in dispatch.judge_queue(
        gpu_sub)
    assert jobs.judge_payload(gpu_sub, settings).gpu_model == "NVIDIA H100 80GB HBM3"
    assert cpu_sub.gpu_model is None and dispatch.judge_queue(cpu_sub) == "cpu"
