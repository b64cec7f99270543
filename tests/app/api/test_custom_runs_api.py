"""Custom runs: valid inputs are stored and queued; malformed uploads are refused, leave nothing."""

from __future__ import annotations

import io
import struct
from datetime import timedelta

import numpy as np
import pytest
from sqlalchemy import func, select

from app.db.models import CustomRun
from app.upkeep.sweeper import sweep
from kernels.fileformat import write_input
from tests.app.utils.broker import messages_waiting


@pytest.fixture
def input_bytes(tmp_path) -> bytes:
    rng = np.random.default_rng(1)
    q, k, v = (rng.uniform(-3, 3, (2, 128, 32)).astype(np.float32) for _ in range(3))
    write_input(tmp_path / "in.bin", q, k, v)
    return (tmp_path / "in.bin").read_bytes()


def leftovers(settings) -> list[str]:
    folder = settings.custom_dir
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def run_count(db) -> int:
    db.expire_all()
    return db.scalar(select(func.count()).select_from(CustomRun))


def test_a_valid_input_is_stored_validated_and_queued(client, db, settings, student,
                                                      input_bytes):
    response = client.post("/api/custom-runs", headers=student.headers,
                           files={"input": ("in.bin", input_bytes)})
    assert response.status_code == 202
    body = response.json()
    assert (body["status"], body["B"], body["N"], body["d"]) == ("queued", 2, 128, 32)
    run = db.get(CustomRun, body["id"])
    assert (settings.custom_dir / run.folder / "input.bin").read_bytes() == input_bytes
    assert client.get(f"/api/custom-runs/{body['id']}/output",
                      headers=student.headers).status_code == 409


BAD = {
    "truncated": (lambda b: b[:-4], "size"),
    "trailing bytes": (lambda b: b + b"\0" * 4, "size"),
    "bad d": (lambda b: struct.pack("<iii", 2, 128, 48) + b[12:], "d"),
    "no header": (lambda b: b"\1\2", "header"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_malformed_input_is_refused_and_leaves_nothing(case, client, db, settings, student,
                                                         input_bytes):
    mangle, field = BAD[case]
    before = (run_count(db), leftovers(settings))
    response = client.post("/api/custom-runs", headers=student.headers,
                           files={"input": ("in.bin", mangle(input_bytes))})
    assert response.status_code == 422, response.text
    assert response.json()["field"] == field
    assert response.json()["detail"].startswith("input file:")
    assert (run_count(db), leftovers(settings)) == before


def test_an_own_output_of_the_wrong_size_is_refused(client, db, settings, student, input_bytes):
    response = client.post("/api/custom-runs", headers=student.headers,
                           files={"input": ("in.bin", input_bytes),
                                  "output": ("out.bin", io.BytesIO(b"\0" * 16))})
    assert response.status_code == 422 and response.json()["field"] == "output"
    assert run_count(db) == 0


def test_an_output_field_left_empty_in_the_browser_is_no_output(client, db, settings, student,
                                                               input_bytes):
    """A browser sends an unfilled file input as a part with an empty file name and no bytes:
    the run is made without an output to compare, not refused for a 0-byte output."""
    response = client.post("/api/custom-runs", headers=student.headers,
                           files={"input": ("in.bin", input_bytes),
                                  "output": ("", io.BytesIO(b""), "application/octet-stream")})
    assert response.status_code == 202, response.text
    run = db.get(CustomRun, response.json()["id"])
    assert not run.has_own_output
    assert not (settings.custom_dir / run.folder / "own.bin").exists()


def test_someone_elses_run_is_not_found(client, student, other_student, input_bytes):
    run_id = client.post("/api/custom-runs", headers=student.headers,
                         files={"input": ("in.bin", input_bytes)}).json()["id"]
    assert client.get(f"/api/custom-runs/{run_id}", headers=other_student.headers
                      ).status_code == 404  # like a missing one: ids cannot be probed


def waiting_on(settings, queue: str) -> int:
    """Messages waiting on a queue of this backend's broker (at any priority: custom runs wait
    at the lowest)."""
    return messages_waiting(settings, queue)


def test_a_run_waits_on_its_own_queue_never_on_the_judging_one(client, settings, student,
                                                                input_bytes):
    response = client.post("/api/custom-runs", headers=student.headers,
                           files={"input": ("in.bin", input_bytes)})
    assert response.status_code == 202
    assert (waiting_on(settings, "custom-cpu"), waiting_on(settings, "cpu")) == (1, 0)


def test_past_the_hourly_limit_a_student_is_told_when_to_retry(client, settings, student, ta,
                                                               input_bytes):
    limited = settings.model_copy(update={"custom_runs_per_hour": 2})
    client.app.state.settings = limited  # what the routes read
    for _ in range(2):
        assert client.post("/api/custom-runs", headers=student.headers,
                           files={"input": ("in.bin", input_bytes)}).status_code == 202
    refused = client.post("/api/custom-runs", headers=student.headers,
                          files={"input": ("in.bin", input_bytes)})
    assert refused.status_code == 429
    detail = refused.json()["detail"]
    assert "at most 2 per hour" in detail and "try again in" in detail and "UTC" in detail
    assert client.post("/api/custom-runs", headers=ta.headers,
                       files={"input": ("in.bin", input_bytes)}).status_code == 202


def test_an_expired_run_says_so_and_its_output_is_gone(client, db, settings, student,
                                                       input_bytes):
    run_id = client.post("/api/custom-runs", headers=student.headers,
                         files={"input": ("in.bin", input_bytes)}).json()["id"]
    run = db.get(CustomRun, run_id)
    run.created_at -= timedelta(hours=settings.custom_run_keep_h, minutes=1)
    db.commit()
    sweep(db, settings)
    body = client.get(f"/api/custom-runs/{run_id}", headers=student.headers).json()
    assert body["expired"] is True and body["output_url"] is None
    assert "deleted" in body["note"]
    output = client.get(f"/api/custom-runs/{run_id}/output", headers=student.headers)
    assert output.status_code == 410 and "expired" in output.json()["detail"]
    listing = client.get("/api/custom-runs", headers=student.headers).json()
    assert [r["id"] for r in listing["runs"]] == [run_id] and listing["runs"][0]["expired"]
    assert listing["keep_h"] == settings.custom_run_keep_h


def test_a_run_belongs_to_the_open_assignment_and_none_runs_in_an_archived_course(
        client, db, settings, student, ta, input_bytes):
    response = client.post("/api/custom-runs", headers=student.headers,
                           files={"input": ("in.bin", input_bytes)})
    assert db.get(CustomRun, response.json()["id"]).assignment.name == settings.suite
    assert client.post("/api/admin/terms/archive", headers=ta.headers).status_code == 200
    refused = client.post("/api/custom-runs", headers=student.headers,
                          files={"input": ("in.bin", input_bytes)})
    assert refused.status_code == 409 and "the course is archived" in refused.json()["detail"]
