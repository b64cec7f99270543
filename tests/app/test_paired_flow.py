"""A paired run for real: two students' c-programs judged through the queue, then the TA asks
for the final standing and a CPU worker runs the two interleaved; the control worker records
the outcome, and the TA page and the board say how it ended."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.db.models import PairedRun
from app.main import create_app
from app.wiring import wired_sessions
from tests.app.test_queue_flow import fetch, submit
from tests.app.utils.processes import start_worker, stop, wait_for

pytestmark = pytest.mark.slow
SOURCE = Path(__file__).parent / "utils" / "seq_attention.c"


@pytest.fixture
def flow_settings(settings: Settings) -> Settings:
    """One quick test (t01), a small budget per pair, and a least band wide enough for this
    shared 2-core machine (one judging of the same program read 0.66 and 0.78 s here): the two
    neighbours overlap whatever the machine's load and the refinement's band."""
    if shutil.which("bwrap") is None and not os.environ.get("FLASHJUDGE_BWRAP"):
        pytest.skip("bubblewrap (bwrap) is not installed: judging needs the sandbox")
    return settings.model_copy(update={"judge_tests": "t01", "paired_budget_s": 4.0,
                                   "refine_timing": False, "paired_least_band": 0.5})


@pytest.fixture
def workers(flow_settings: Settings, tmp_path: Path) -> Iterator[Path]:
    control = start_worker(flow_settings, "control", tmp_path / "control.log")
    judge = start_worker(flow_settings, "judge", tmp_path / "judge.log")
    yield tmp_path / "judge.log"
    stop(judge)
    stop(control)


def paired_run(settings: Settings) -> PairedRun | None:
    with wired_sessions(settings.db_url)() as db:
        run = db.query(PairedRun).one_or_none()
        if run is not None:
            db.expunge(run)
        return run


def test_the_same_program_of_two_students_is_compared_and_the_board_says_how(
        flow_settings, workers, student, other_student, ta):
    source = SOURCE.read_bytes()
    with TestClient(create_app(flow_settings)) as client:
        ids = [submit(client, who, source) for who in (student, other_student)]
        wait_for(lambda: all(fetch(flow_settings, s).status == "done" for s in ids), 360,
                 "both submissions to be judged")
        body = client.post("/api/admin/paired-runs", headers=ta.headers).json()
        assert body["sent"] == 1, (body, client.get("/api/scoreboard?live=true",
                                                    headers=ta.headers).json())
        run = wait_for(lambda: (r := paired_run(flow_settings)) and r.status != "pending" and r,
                       180, "the paired run's outcome")
        admin = client.get("/admin", headers=ta.headers).text
        board = client.get("/scoreboard", headers=ta.headers).text
    assert isinstance(run, PairedRun)
    assert run.status == "done", (run.reason, workers.read_text()[-3000:])
    assert run.rounds >= 1 and 0 < run.gpu_s <= 4.0 * 1.5
    assert "Pairs pending 0 · done 1" in admin
    assert "paired rounds" in board or "ordered by paired runs" in board
