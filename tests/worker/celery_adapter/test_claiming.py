"""A judge worker judges an attempt at most once, whatever the broker delivers, and never goes on
announcing an attempt it stopped working on.

The task functions run in this process with the real pipeline and sandbox on a c-program, against
a real broker (the embedded one, whose control messages are read back off its files, or a Redis
that is down) and the real attempt ledger under the data dir.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from celery import Celery
from kombu.exceptions import OperationalError

from flashjudge.claims import ClaimState, FileLedger, attempt_name, submission_subject
from flashjudge.contract import JudgePayload
from tests.app.utils.processes import REPO
from tests.conftest import WorkerEnv
from tests.embedded_broker import embedded_broker
from worker.celery_adapter import messages
from worker.celery_adapter.claiming import Work
from worker.celery_adapter.tasks import WorkerState, judge_attempt, judge_task

BROKEN = b"int main( {\n"  # a compile error: judged (CE) in about a second
SOURCE = (REPO / "tests" / "app" / "utils" / "seq_attention.c").read_bytes()
OUTCOMES = ("flashjudge.record_result", "flashjudge.record_failure")


def payload(source: bytes, attempt: int = 1, key: str = "k1") -> dict[str, Any]:
    return {"submission_id": 9, "attempt": attempt, "job": key, "language": "c-program",
            "files": {"hw4.c": base64.b64encode(source).decode()}, "suite": "hw4-mini",
            "tests": ["t01"], "seed": None}


def control_messages(data: Path) -> list[str]:
    """Names of the tasks sent to the control queue, heartbeats left out (a message file lies
    whole or not at all: flashjudge/embedded_transport.py)."""
    names = [json.loads(path.read_text())["headers"]["task"]
             for path in sorted((data / "broker" / "queue").glob("*.control.msg"))]
    return [n for n in names if n != "flashjudge.worker_status"]


@pytest.fixture
def data(tmp_path: Path, worker_env_vars: WorkerEnv) -> Path:
    """A worker's environment: embedded broker and ledger under tmp_path, short heartbeats."""
    worker_env_vars({"FLASHJUDGE_DATA_DIR": str(tmp_path), "FLASHJUDGE_BROKER_URL": None,
                     "FLASHJUDGE_HEARTBEAT_S": "0.2"})
    return tmp_path


@pytest.fixture
def worker_state(data: Path) -> Iterator[Callable[[Celery], WorkerState]]:
    """WorkerState for an app, stopped after the test: a heartbeat left beating would read the
    worker settings of every later test in this process (and once sent a claim elsewhere)."""
    made: list[WorkerState] = []

    def make(app: Celery) -> WorkerState:
        made.append(WorkerState(app))
        return made[-1]

    yield make
    for state in made:
        state.stop()


def embedded_app(data: Path) -> Celery:
    app = Celery("claiming-test")
    app.conf.update(embedded_broker(data))
    return app


def test_a_second_delivery_of_an_attempt_is_dropped_unjudged(data: Path, worker_state, caplog):
    app = embedded_app(data)
    state = worker_state(app)
    task = SimpleNamespace(app=app)
    caplog.set_level(logging.INFO)
    judge_task(task, payload(BROKEN), state)
    judge_task(task, payload(BROKEN), state)  # the sweeper's re-send of the same attempt
    assert control_messages(data).count("flashjudge.record_result") == 1
    judged = [r for r in caplog.records if r.getMessage().startswith("judging attempt")]
    assert len(judged) == 1
    assert any("duplicate" in r.getMessage() for r in caplog.records)


def test_a_stale_attempt_is_dropped_before_judging(data: Path, worker_state, caplog):
    app = embedded_app(data)
    FileLedger(data / "claims").publish(submission_subject(9), 2, "k2")  # attempt 1 was lost
    caplog.set_level(logging.INFO)
    judge_task(SimpleNamespace(app=app), payload(BROKEN, 1, "k1"), worker_state(app))
    assert control_messages(data) == []
    assert any("stale: the live attempt is attempt 2" in r.getMessage() for r in caplog.records)


def test_a_judging_stops_when_its_attempt_is_no_longer_live(data: Path, worker_state):
    app = embedded_app(data)
    state = worker_state(app)
    job = JudgePayload.from_dict(payload(SOURCE))
    work = Work(submission_subject(9), 1, "k1")
    assert state.claims.refusal(work) is None
    FileLedger(data / "claims").publish(submission_subject(9), 2, "k2")  # swept meanwhile
    judge_attempt(app, job, state, work)  # built, then stopped before its first test
    assert not set(control_messages(data)) & set(OUTCOMES)
    assert state.heartbeat.status().job is None
    name = attempt_name(1, "k1")
    assert FileLedger(data / "claims").state(submission_subject(9), name).state is ClaimState.LOST


def test_an_outcome_that_cannot_be_sent_leaves_no_job_announced(
        data: Path, worker_state, monkeypatch: pytest.MonkeyPatch):
    """Red-team item 3: the broker is down when the result goes out. The heartbeat must stop
    announcing the job and its alive mark must go, so the sweeper sees a lost judging."""
    monkeypatch.setattr(messages, "PATIENT", {"max_retries": 1, "interval_start": 0,
                                              "interval_step": 0.1, "interval_max": 0.1})
    down = Celery("broker-down")
    down.conf.update(broker_url="redis://127.0.0.1:9/0", broker_connection_retry=False,
                     broker_connection_max_retries=1, task_serializer="json")
    state = worker_state(down)  # its ledger is still the data dir's (files)
    work = Work(submission_subject(9), 1, "k1")
    assert state.claims.refusal(work) is None
    with pytest.raises(OperationalError):  # the broker is unreachable
        judge_attempt(down, JudgePayload.from_dict(payload(BROKEN)), state, work)
    assert state.heartbeat.status().job is None and state.claims.current is None
    state.claims.beat()  # the heartbeat's next beat revives nothing
    ledger = FileLedger(data / "claims")
    assert ledger.state(submission_subject(9), attempt_name(1, "k1")).state is ClaimState.LOST


def heartbeats_alive() -> int:
    return sum(t.name == "heartbeat" and t.is_alive() for t in threading.enumerate())


def test_a_stopped_worker_state_beats_no_more(data: Path):
    """The cause of two CI failures: states made in-process kept a heartbeat thread reading
    the settings of later tests; stop() ends it before returning."""
    app = embedded_app(data)
    before = heartbeats_alive()
    state = WorkerState(app)
    state.heartbeat.set(None)  # the first beat goes out, as at a worker's start
    assert heartbeats_alive() == before + 1
    state.stop()
    assert heartbeats_alive() == before
