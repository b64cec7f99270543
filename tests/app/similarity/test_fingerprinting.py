"""Fingerprints are made on the control side when a submission or a source is stored."""

from __future__ import annotations

from sqlalchemy import func, select

from app.control import tasks
from app.db.models import Fingerprint, SubmissionFile
from app.similarity.engine import from_bytes
from app.similarity.fingerprinting import document_text
from app.submissions import dispatch
from tests.app.utils.queued import waiting
from tests.app.utils.similar import TILED, fresh_index, submit  # noqa: F401 - fixture


def test_a_stored_submission_asks_the_control_worker_for_its_fingerprints(client, settings,
                                                                          student):
    response = client.post("/api/submissions", headers=student.headers,
                           data={"language": "cuda-program"},
                           files=[("files", ("hw4.cu", TILED.encode()))])
    sub_id = response.json()["id"]
    dispatch.fingerprint_batch(settings).flush()  # sent within its window; not waited for here
    asked = [kw["payload"] for task, kw in waiting(settings, "control")
             if task == "flashjudge.fingerprint"]
    assert asked == [{"submission_id": None, "source_id": None, "submission_ids": [sub_id]}]
    assert not [k for t, k in waiting(settings, "gpu") if t == "flashjudge.fingerprint"]


def test_the_control_task_stores_them_once_per_document(db, settings, control_env, student):
    sub_id = submit(db, settings, student, TILED, fingerprint=False)
    payload = {"submission_id": sub_id, "source_id": None}
    assert tasks.fingerprint(payload) and tasks.fingerprint(payload)
    db.expire_all()
    assert db.scalar(select(func.count()).select_from(Fingerprint)) == 1
    stored = from_bytes(db.scalar(select(Fingerprint.data)))
    assert len(stored) > 50 and stored.first_lines.min() >= 2  # line 1 is the file header
    assert not tasks.fingerprint({"submission_id": sub_id + 99})  # gone: nothing


def test_a_submission_is_one_document_of_its_sources_in_name_order() -> None:
    files = [SubmissionFile(name="Makefile", content=b"hw4: hw4.cu\n"),
             SubmissionFile(name="util.cuh", content=b"#define N 4\n"),
             SubmissionFile(name="hw4.cu", content=b"int main() {}\n")]
    assert document_text(files) == ("// ---- hw4.cu ----\nint main() {}\n"
                                    "// ---- util.cuh ----\n#define N 4\n")


def test_uploads_are_asked_for_together_and_fingerprinted_in_one_go(client, db, settings,
                                                                   control_env, student,
                                                                   other_student):
    ids = [client.post("/api/submissions", headers=account.headers,
                       data={"language": "cuda-program"},
                       files=[("files", ("hw4.cu", TILED.encode()))]).json()["id"]
           for account in (student, other_student)]
    dispatch.fingerprint_batch(settings).flush()  # sent within its window; not waited for here
    asked = [kw["payload"] for task, kw in waiting(settings, "control")
             if task == "flashjudge.fingerprint"]
    assert [i for payload in asked for i in payload["submission_ids"]] == ids  # in one message
    # unless the batch's window closed between the two uploads
    assert tasks.fingerprint({**asked[0], "submission_ids": [*ids, ids[-1] + 99]})
    db.expire_all()
    assert set(db.scalars(select(Fingerprint.submission_id))) == set(ids)  # the gone one skipped
