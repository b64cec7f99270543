"""Custom runs: valid inputs are stored and queued; malformed uploads are refused, leave nothing."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
from sqlalchemy import func, select

from app.db.models import CustomRun
from kernels.fileformat import write_input


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


def test_someone_elses_run_is_not_found(client, student, other_student, input_bytes):
    run_id = client.post("/api/custom-runs", headers=student.headers,
                         files={"input": ("in.bin", input_bytes)}).json()["id"]
    assert client.get(f"/api/custom-runs/{run_id}", headers=other_student.headers
                      ).status_code == 404  # like a missing one: ids cannot be probed
