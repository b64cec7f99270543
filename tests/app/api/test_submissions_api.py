"""POST/GET /api/submissions on both backends: what a student sees; bad input changes nothing."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import Submission, SubmissionFile
from tests.app.utils.factories import Account, make_submission

GOOD = ("hw4.c", b"int main(void) { return 0; }\n")


def submit(client: TestClient, account: Account, files=(GOOD,), language: str = "c-program"):
    return client.post("/api/submissions", headers=account.headers, data={"language": language},
                       files=[("files", (name, data)) for name, data in files])


def counts(db: Session) -> tuple[int, int]:
    db.expire_all()
    return (db.scalars(select(func.count()).select_from(Submission)).one(),
            db.scalars(select(func.count()).select_from(SubmissionFile)).one())


def test_submit_returns_202_with_an_id_and_the_row_is_queued(client, db, student):
    response = submit(client, student)
    assert response.status_code == 202
    sub_id = response.json()["id"]
    body = client.get(f"/api/submissions/{sub_id}", headers=student.headers).json()
    assert body["id"] == sub_id
    assert body["status"] == "queued"
    assert body["verdict"] is None and body["tests"] == []
    assert body["queue_position"] == 0
    sub = db.get(Submission, sub_id)
    assert sub.sent_at is not None, "the task was sent after the row was committed"


def test_my_submissions_lists_only_mine(client, student, other_student):
    mine = submit(client, student).json()["id"]
    submit(client, other_student)
    listed = client.get("/api/submissions/mine", headers=student.headers).json()
    assert [s["id"] for s in listed] == [mine]


def test_a_newer_submission_supersedes_the_queued_one(client, db, student):
    first = submit(client, student).json()["id"]
    second = submit(client, student).json()["id"]
    old = client.get(f"/api/submissions/{first}", headers=student.headers).json()
    assert (old["status"], old["verdict"]) == ("done", "SUPERSEDED")
    assert client.get(f"/api/submissions/{second}", headers=student.headers).json()[
        "status"] == "queued"


def test_rate_limit_refuses_a_quick_second_submission(client, db, student):
    client.app.state.settings = client.app.state.settings.model_copy(
        update={"submit_interval_s": 300})
    assert submit(client, student).status_code == 202
    before = counts(db)
    response = submit(client, student)
    assert response.status_code == 429
    assert "wait" in response.json()["detail"]
    assert counts(db) == before


def test_someone_elses_submission_answers_like_a_missing_one(client, db, student,
                                                            other_student):
    """404 with the same body for both, so ids cannot be probed."""
    sub = make_submission(db, other_student)
    missing = client.get(f"/api/submissions/{sub.id + 1000}", headers=student.headers)
    for path in (f"/api/submissions/{sub.id}", f"/api/submissions/{sub.id}/files/hw4.c",
                 f"/api/submissions/{sub.id}/events", f"/api/submissions/{sub.id}/profiles"):
        response = client.get(path, headers=student.headers)
        assert (response.status_code, response.json()) == (404, missing.json()), path
    assert client.get(f"/api/submissions/{sub.id}/files/hw4.c",
                      headers=other_student.headers).text.startswith("int main")


def test_a_ta_reads_any_submission(client, db, student, ta):
    sub = make_submission(db, student)
    body = client.get(f"/api/submissions/{sub.id}", headers=ta.headers).json()
    assert body["user"] == "alice" and "error" in body


BAD_INPUT = {
    "unknown language": ({"language": "fortran"}, [GOOD], 422, "language"),
    "wrong extension": ({}, [("hw4.py", b"print(1)\n")], 422, "files"),
    "non-UTF-8 source": ({}, [("hw4.c", b"int main(){}\n\xff\xfe\n")], 422, "files"),
    "path in file name": ({}, [("../../etc/hw4.c", GOOD[1])], 422, "files"),
    "dot-dot file name": ({}, [("..hw4.c", GOOD[1])], 422, "files"),
    "oversized file": ({}, [("hw4.c", b"/*" + b"x" * 300_000 + b"*/")], 413, "files"),
    "duplicate names": ({}, [GOOD, GOOD], 422, "files"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input_gets_a_clear_4xx_and_changes_nothing(case, client, db, student):
    extra, files, status, field = BAD_INPUT[case]
    before = counts(db)
    response = submit(client, student, files, **extra)
    assert response.status_code == status, response.text
    body = response.json()
    assert body["field"] == field and body["detail"]
    assert "Traceback" not in response.text
    assert counts(db) == before


def test_no_files_and_no_login_are_refused(client, db, student):
    response = client.post("/api/submissions", headers=student.headers,
                           data={"language": "c-program"})
    assert response.status_code == 422
    assert response.json() == {"detail": "files: choose your hw4.c (or drop it here)",
                               "field": "files"}
    empty_picker = submit(client, student, [("", b"")], language="cuda-program")
    assert empty_picker.json()["detail"] == "files: choose your hw4.cu (or drop it here)"
    response = client.post("/api/submissions", data={"language": "c-program"},
                           files=[("files", GOOD)])
    assert response.status_code == 401
    assert counts(db) == (0, 0)


def test_an_unknown_submission_is_404(client, student):
    response = client.get("/api/submissions/999999", headers=student.headers)
    assert response.status_code == 404 and response.json()["detail"] == "no such submission"
