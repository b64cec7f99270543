"""Custom-run slots are claimed before the upload is read, and no upload writes past its limit
(20 uploads sent at once were all accepted against a limit of 5, and a refused
1.2 GB upload grew /tmp by 2.29 GB first)."""

from __future__ import annotations

import socket
import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.custom_runs import quota
from app.db.models import CustomRun
from app.main import create_app
from kernels.fileformat import write_input
from tests.app.utils.live_server import live_server
from tests.app.utils.processes import wait_for

KB = 1024


@pytest.fixture
def input_bytes(tmp_path: Path) -> bytes:
    """A 2x128x32 input: 98,316 bytes."""
    rng = np.random.default_rng(1)
    q, k, v = (rng.uniform(-3, 3, (2, 128, 32)).astype(np.float32) for _ in range(3))
    write_input(tmp_path / "in.bin", q, k, v)
    return (tmp_path / "in.bin").read_bytes()


def written_bytes() -> int:
    """Bytes this process has passed to write(2) so far (files, pipes: all of it)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/self/io")


def leftovers(settings) -> set[str]:
    """What is under the custom-run dir (the data dir outlives each test: compare, not count)."""
    folder = settings.custom_dir
    return {p.name for p in folder.iterdir()} if folder.exists() else set()


def runs(db) -> int:
    db.expire_all()
    return db.scalar(select(func.count()).select_from(CustomRun)) or 0


def test_twenty_uploads_at_once_get_exactly_the_hourly_limit(settings, db, student,
                                                             input_bytes):
    limited = settings.model_copy(update={"custom_runs_per_hour": 5})
    barrier = threading.Barrier(20)

    def upload(_: int) -> tuple[int, str]:
        with TestClient(create_app(limited)) as client:
            barrier.wait()
            response = client.post("/api/custom-runs", headers=student.headers,
                                   files={"input": ("in.bin", input_bytes)})
        return response.status_code, response.json()["detail" if response.is_error else "status"]

    before = leftovers(settings)
    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(upload, range(20)))
    assert sorted(code for code, _ in answers) == [202] * 5 + [429] * 15
    refusals = {detail.split(";")[0] for code, detail in answers if code == 429}
    assert refusals == {"too many custom runs: at most 5 per hour"}
    assert runs(db) == 5 and len(leftovers(settings) - before) == 5  # the refused: nothing


def test_an_input_longer_than_its_header_is_cut_at_its_size(settings, db, student,
                                                            input_bytes):
    """Within the request's limit, past the input's own size: refused at its first byte too
    many, so what was written is at most the input's size (the old route spooled all of it to
    the temp dir, then copied up to max_input_bytes of it)."""
    small = settings.model_copy(update={"max_input_bytes": 1024 * KB})
    padded = input_bytes + b"\0" * (1200 * KB)
    files = leftovers(settings)
    with TestClient(create_app(small)) as client:
        before = written_bytes()
        response = client.post("/api/custom-runs", headers=student.headers,
                               files={"input": ("in.bin", padded)})
        written = written_bytes() - before
    assert response.status_code == 422 and response.json()["field"] == "size"
    assert written < len(input_bytes) + 256 * KB, written  # the slack: database, log lines
    assert leftovers(settings) == files and runs(db) == 0


def test_a_header_announcing_too_much_is_refused_after_twelve_bytes(settings, db, student,
                                                                    input_bytes):
    small = settings.model_copy(update={"max_input_bytes": 64 * KB})
    files = leftovers(settings)
    with TestClient(create_app(small)) as client:
        response = client.post("/api/custom-runs", headers=student.headers,
                               files={"input": ("in.bin", input_bytes[:80 * KB])})
    assert response.status_code == 413
    assert response.json()["detail"] == \
        "input file: its header announces 98316 bytes; at most 65536 are accepted"
    assert leftovers(settings) == files and runs(db) == 0


def test_a_students_disk_quota_counts_what_their_runs_keep(settings, db, student, ta,
                                                           input_bytes):
    quota = settings.model_copy(update={"custom_run_disk_per_student_gb": 200 * KB / 2**30})
    with TestClient(create_app(quota)) as client:
        first = client.post("/api/custom-runs", headers=student.headers,
                            files={"input": ("in.bin", input_bytes)})
        second = client.post("/api/custom-runs", headers=student.headers,
                             files={"input": ("in.bin", input_bytes)})
        teaching = client.post("/api/custom-runs", headers=ta.headers,
                               files={"input": ("in.bin", input_bytes)})
    assert first.status_code == 202 and teaching.status_code == 202
    assert second.status_code == 429 and int(second.headers["Retry-After"]) > 0
    assert second.json()["detail"].startswith("your custom runs may keep at most 0.000191 GB")
    kept = db.scalar(select(CustomRun.kept_bytes).where(CustomRun.id == first.json()["id"]))
    assert kept == len(input_bytes) + 2 * 128 * 32 * 4  # the input and its reference output
    assert runs(db) == 2


def test_the_total_disk_quota_is_shared_by_everyone(settings, db, student, other_student,
                                                    input_bytes):
    quota = settings.model_copy(update={"custom_run_disk_total_gb": 200 * KB / 2**30})
    files = leftovers(settings)
    with TestClient(create_app(quota)) as client:
        mine = client.post("/api/custom-runs", headers=student.headers,
                           files={"input": ("in.bin", input_bytes)})
        theirs = client.post("/api/custom-runs", headers=other_student.headers,
                             files={"input": ("in.bin", input_bytes)})
    assert mine.status_code == 202 and theirs.status_code == 503
    assert "space for custom runs (0.000191 GB) is full" in theirs.json()["detail"]
    assert len(leftovers(settings) - files) == 1


def stalled_upload(url: str, token: str, declared: int) -> socket.socket:
    """A client that announces a `declared`-byte upload of an input as large as allowed (its
    header says so), sends its first kilobytes, then stops sending."""
    host, port = url.removeprefix("http://").split(":")
    boundary = "fj-stalled"
    part = (f'--{boundary}\r\nContent-Disposition: form-data; name="input"; filename="in.bin"'
            f"\r\nContent-Type: application/octet-stream\r\n\r\n").encode()
    conn = socket.create_connection((host, int(port)), timeout=10)
    conn.sendall(f"POST /api/custom-runs HTTP/1.1\r\nHost: {host}\r\nAuthorization: {token}\r\n"
                 f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                 f"Content-Length: {declared}\r\n\r\n".encode()
                 + part + struct.pack("<iii", 4, 4096, 4096) + bytes(64 * KB))
    return conn


def reserved_bytes(db) -> int:
    db.expire_all()
    return int(db.scalar(select(func.coalesce(func.sum(CustomRun.kept_bytes), 0)).where(
        CustomRun.status == "reserved")) or 0)


def test_a_stalled_upload_holds_the_disk_it_sent_not_what_it_declared(settings, db, student,
                                                                      other_student,
                                                                      input_bytes):
    declared = 1000 << 20  # under max_input_bytes: a real upload of this size is accepted
    roomy = settings.model_copy(update={"custom_run_disk_total_gb": 1.0,
                                        "body_idle_timeout_s": 60.0})
    with live_server(roomy) as url:
        stalled = [stalled_upload(url, student.headers["Authorization"], declared)
                   for _ in range(3)]
        try:  # each reserved at once: not 3 x 1.33 GB against 1 GB
            wait_for(lambda: runs(db) == 3, 10, "the three uploads' reservations")
            assert reserved_bytes(db) <= 3 * quota.held_for(64 * KB, declared) < declared
            answer = httpx.post(f"{url}/api/custom-runs", headers=other_student.headers,
                                files={"input": ("in.bin", input_bytes)}, timeout=30)
            assert answer.status_code == 202, answer.text  # the space is not held by promises
        finally:
            for conn in stalled:
                conn.close()


def test_an_upload_that_fills_the_space_as_it_arrives_is_refused_midway(settings, db, student,
                                                                       other_student,
                                                                       input_bytes, monkeypatch):
    monkeypatch.setattr(quota, "STEP", 16 * KB)  # held 16 KB at a time: grown several times
    small = settings.model_copy(update={"custom_run_disk_total_gb": 140 * KB / 2**30,
                                        "body_idle_timeout_s": 60.0})
    files = leftovers(settings)
    with live_server(small) as url:
        stalled = stalled_upload(url, student.headers["Authorization"], 1000 << 20)
        try:  # it holds its first 16 KB (and a third): 21 KB of 140, the other upload 131
            wait_for(lambda: runs(db) == 1, 10, "the stalled upload's reservation")
            answer = httpx.post(f"{url}/api/custom-runs", headers=other_student.headers,
                                files={"input": ("in.bin", input_bytes)}, timeout=30)
        finally:
            stalled.close()
    assert answer.status_code == 503, answer.text
    assert "space for custom runs (0.000134 GB) is full" in answer.json()["detail"]
    wait_for(lambda: runs(db) == 0, 10, "both reservations given back")
    assert leftovers(settings) == files
