"""The real thing: API -> broker -> control worker process -> fingerprints -> the TAs' pairs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from app.core.config import Settings
from app.db.models import Fingerprint
from app.wiring import wired_sessions
from tests.app.utils.processes import start_worker, stop, wait_for
from tests.app.utils.similar import COPY, TILED, fresh_index  # noqa: F401 - fixture

pytestmark = pytest.mark.slow


@pytest.fixture
def control_worker(settings: Settings, tmp_path: Path) -> Iterator[None]:
    proc = start_worker(settings, "control", tmp_path / "control.log")
    yield
    stop(proc)


def fingerprinted(settings: Settings) -> set[int]:
    with wired_sessions(settings.db_url)() as db:
        return set(db.scalars(select(Fingerprint.submission_id)))


def test_stored_submissions_are_fingerprinted_by_the_control_worker(client, settings, student,
                                                                   other_student, ta,
                                                                   control_worker):
    ids = []
    for account, text in ((student, TILED), (other_student, COPY)):
        response = client.post("/api/submissions", headers=account.headers,
                               data={"language": "cuda-program"},
                               files=[("files", ("hw4.cu", text.encode()))])
        ids.append(response.json()["id"])
    wait_for(lambda: fingerprinted(settings) == set(ids), 60, "both fingerprints")
    body = client.get("/api/similarity/pairs", headers=ta.headers).json()
    assert body["documents"] == 2 and body["waiting"] == 0
    assert body["pairs"][0]["score"] > 0.8
