"""The real queue: API -> broker -> judge worker (bwrap sandbox) -> control worker -> database.

Runs on both backends (SQLite + filesystem broker, PostgreSQL + Redis). The kill test SIGKILLs the
judge worker mid-judge and checks the sweeper still brings the submission to exactly one final
result, judged by a fresh worker.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import JudgedTest, Submission
from app.main import create_app
from app.upkeep.sweeper import sweep
from app.wiring import wired_sessions
from kernels.fileformat import write_input
from tests.app.utils.factories import Account
from tests.app.utils.processes import descendants, kill_group, start_worker, stop, wait_for

pytestmark = pytest.mark.slow
SOURCE = Path(__file__).parent / "utils" / "seq_attention.c"


@pytest.fixture
def flow_settings(settings: Settings) -> Settings:
    """One quick test (t01), and a sweeper that notices a silent worker within seconds."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed: judging needs the sandbox")
    return settings.model_copy(update={"judge_tests": "t01", "running_timeout_s": 3.0})


@pytest.fixture
def control_worker(flow_settings: Settings, tmp_path: Path) -> Iterator[None]:
    proc = start_worker(flow_settings, "control", tmp_path / "control.log")
    yield
    stop(proc)


def fetch(settings: Settings, sub_id: int) -> Submission:
    with wired_sessions(settings.db_url)() as db:
        sub = db.get(Submission, sub_id)
        assert sub is not None
        db.expunge(sub)
        return sub


def submit(client: TestClient, account: Account, source: bytes) -> int:
    response = client.post("/api/submissions", headers=account.headers,
                           data={"language": "c-program"}, files=[("files", ("hw4.c", source))])
    assert response.status_code == 202, response.text
    return response.json()["id"]


def test_a_worker_killed_mid_judge_still_gives_exactly_one_result(
        flow_settings, control_worker, student, tmp_path, db: Session):
    slow = b"#define SLEEP_S 4\n" + SOURCE.read_bytes()
    judge = start_worker(flow_settings, "judge", tmp_path / "judge1.log")
    with TestClient(create_app(flow_settings)) as client:
        sub_id = submit(client, student, slow)
        try:  # the submission's own process runs (sandboxed) below the worker: kill it then
            wait_for(lambda: any(name == "hw4" for _, name in descendants(judge.pid)), 120,
                     "the submission to start running under the worker")
        finally:
            kill_group(judge)  # SIGKILL the worker and its pool child mid-judge
        replacement = start_worker(flow_settings, "judge", tmp_path / "judge2.log")
        try:
            def tick() -> None:
                with wired_sessions(flow_settings.db_url)() as sweeper_db:
                    sweep(sweeper_db, flow_settings)

            wait_for(lambda: fetch(flow_settings, sub_id).status == "done", 180,
                     "the swept submission to be judged again", tick)
        finally:
            stop(replacement)
        body = client.get(f"/api/submissions/{sub_id}", headers=student.headers).json()
    assert body["status"] == "done" and body["attempt"] == 2
    assert body["verdict"] == "AC", (tmp_path / "judge2.log").read_text()[-3000:]
    assert [(t["id"], t["verdict"]) for t in body["tests"]] == [("t01", "AC")]
    assert db.query(JudgedTest).filter_by(submission_id=sub_id).count() == 1


def test_a_custom_run_gets_its_reference_output(flow_settings, control_worker, student, ta,
                                                tmp_path):
    rng = np.random.default_rng(3)
    q, k, v = (rng.uniform(-3, 3, (2, 128, 32)).astype(np.float32) for _ in range(3))
    write_input(tmp_path / "in.bin", q, k, v)
    judge = start_worker(flow_settings, "judge", tmp_path / "judge.log")
    try:
        with TestClient(create_app(flow_settings)) as client:
            def idle_worker() -> bool:
                status = client.get("/api/admin/status", headers=ta.headers).json()
                return any(w["state"] == "idle" and w["gpu"] == "cpu"
                           for w in status["workers"])

            wait_for(idle_worker, 60, "the idle worker's heartbeat")
            files = {"input": ("in.bin", (tmp_path / "in.bin").read_bytes()),
                     "output": ("out.bin", np.zeros(2 * 128 * 32, np.float32).tobytes())}
            run_id = client.post("/api/custom-runs", headers=student.headers,
                                 files=files).json()["id"]

            def done() -> dict | None:
                body = client.get(f"/api/custom-runs/{run_id}", headers=student.headers).json()
                return body if body["status"] == "done" else None

            body = wait_for(done, 180, "the custom run to finish")
            output = client.get(body["output_url"], headers=student.headers)
    finally:
        stop(judge)
    assert body["error"] is None and body["reference"]
    assert body["report"]["ok"] is False and body["report"]["max_error"] > 5e-3
    got = np.frombuffer(output.content, np.float32).reshape(2, 128, 32)
    scores = np.einsum("bnd,bmd->bnm", q.astype(np.float64), k) / np.sqrt(32)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    want = (weights / weights.sum(-1, keepdims=True)) @ v
    assert np.abs(got - want).max() < 5e-3


def test_a_superseded_submission_is_skipped_by_a_live_worker(
        flow_settings, control_worker, student, other_student, tmp_path):
    slow = b"#define SLEEP_S 3\n" + SOURCE.read_bytes()
    log = tmp_path / "judge.log"
    judge = start_worker(flow_settings, "judge", log)
    try:
        with TestClient(create_app(flow_settings)) as client:
            submit(client, other_student, slow)  # keeps the worker busy meanwhile
            wait_for(lambda: any(name == "hw4" for _, name in descendants(judge.pid)), 120,
                     "the first submission to run")
            replaced = submit(client, student, SOURCE.read_bytes())
            newest = submit(client, student, SOURCE.read_bytes())
            wait_for(lambda: fetch(flow_settings, newest).status == "done", 180,
                     "the newest submission to be judged")
    finally:
        stop(judge)
    old = fetch(flow_settings, replaced)
    assert (old.status, old.verdict) == ("done", "SUPERSEDED")
    assert fetch(flow_settings, newest).verdict == "AC"
    assert f"Discarding revoked task: flashjudge.judge[{old.task_id}]" in log.read_text()
