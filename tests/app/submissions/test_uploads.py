"""The app holds the contract's upload rule (flashjudge/contract/uploads.py), announces it, and
refuses an upload over it with a message that names the limit, storing nothing."""

from __future__ import annotations

from sqlalchemy import func, select

from app.db.models import Submission
from flashjudge.contract import MAX_FILE_BYTES, MAX_FILES

SOURCE = b"int main(void) { return 0; }\n"


def post(client, account, files):
    return client.post("/api/submissions", headers=account.headers,
                       data={"language": "c-program"},
                       files=[("files", (name, data)) for name, data in files])


def test_the_announced_limits_are_the_contracts(client, student):
    body = client.get("/api/submissions/limits", headers=student.headers).json()
    assert (body["max_files"], body["max_source_bytes"]) == (MAX_FILES, MAX_FILE_BYTES)


def test_one_file_too_many_is_refused_saying_the_limit(client, db, student):
    files = [(f"part{i}.c", SOURCE) for i in range(MAX_FILES + 1)]
    response = post(client, student, files)
    assert response.status_code == 422
    assert response.json() == {"detail": f"{MAX_FILES + 1} files; at most {MAX_FILES}",
                               "field": "files"}
    assert db.scalar(select(func.count()).select_from(Submission)) == 0


def test_a_file_one_byte_over_is_refused_and_one_at_the_limit_accepted(client, db, student):
    at_limit = b"/*" + b"x" * (MAX_FILE_BYTES - 5) + b"*/\n"
    response = post(client, student, [("hw4.c", at_limit + b"\n")])
    assert response.status_code == 413
    assert response.json() == {
        "detail": f"hw4.c has {MAX_FILE_BYTES + 1} bytes; at most {MAX_FILE_BYTES}",
        "field": "files"}
    assert db.scalar(select(func.count()).select_from(Submission)) == 0
    assert post(client, student, [("hw4.c", at_limit)]).status_code == 202


def test_an_empty_or_blank_source_is_refused_before_it_uses_up_the_interval(client, db, student):
    """An empty hw4.c (a wrong file saved, a new buffer) is no attempt: judging it only said
    "undefined reference to main", spent the submit interval and counted as late."""
    for content in (b"", b"  \n\t\n"):
        response = post(client, student, [("hw4.c", content)])
        assert response.status_code == 422
        assert response.json() == {
            "detail": "hw4.c is empty: choose the file that holds your code", "field": "files"}
    assert db.scalar(select(func.count()).select_from(Submission)) == 0
    assert post(client, student, [("hw4.c", SOURCE)]).status_code == 202
