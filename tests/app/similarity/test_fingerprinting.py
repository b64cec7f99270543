"""Fingerprints are made on the control side when a submission or a source is stored."""

from __future__ import annotations

from sqlalchemy import func, select

from app.control import tasks
from app.db.models import Fingerprint, SubmissionFile
from app.similarity import from_bytes
from app.similarity.fingerprinting import document_text
from tests.app.utils.queued import waiting
from tests.app.utils.similar import TILED, fresh_index, submit  # noqa: F401 - fixture


def test_a_stored_submission_asks_the_control_worker_for_its_fingerprints(client, settings,
                                                                          student):
    response = client.post("/api/submissions", headers=student.headers,
                           data={"language": "cuda-program"},
                           files=[("files", ("hw4.cu", TILED.encode()))])
    sub_id = response.json()["id"]
    asked = [kw["payload"] for task, kw in waiting(settings, "control")
             if task == "flashjudge.fingerprint"]
    assert asked == [{"submission_id": sub_id, "source_id": None}]
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
