"""A real judge worker writes JSON log lines tagged with the submission it judges, and its result
names the worker, its GPU and the judge's wall seconds (what /metrics reads).

One real Celery worker (prefork, queue cpu) on the embedded broker judges a real c-program on
hw4-mini t01; its control messages are read back off the broker's files.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from tests.app.utils.processes import REPO, kill_group, wait_for
from tests.embedded_broker import embedded_broker

pytestmark = pytest.mark.slow
SOURCE = REPO / "tests" / "app" / "utils" / "seq_attention.c"


def control_messages(data: Path) -> list[tuple[str, list[Any]]]:
    """(task name, args) of every message on the control queue but heartbeats, in send order."""
    out = []
    for path in sorted((data / "broker" / "queue").glob("*.control.msg")):
        message = json.loads(path.read_text())
        out.append((message["headers"]["task"], json.loads(base64.b64decode(message["body"]))[0]))
    return [m for m in out if m[0] != "flashjudge.worker_status"]


def json_lines(log: Path) -> list[dict[str, Any]]:
    """The worker's JSON log lines (Celery's start-up banner is printed, not logged)."""
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def start_cpu_worker(data: Path, log: Path) -> subprocess.Popen:
    env = {**os.environ, "FLASHJUDGE_DATA_DIR": str(data), "FLASHJUDGE_QUEUES": "cpu",
           "FLASHJUDGE_WORKER_NAME": "cpu", "CUDA_VISIBLE_DEVICES": "",
           "FLASHJUDGE_LOG_LEVEL": "INFO", "PYTHONPATH": str(REPO)}
    env.pop("FLASHJUDGE_BROKER_URL", None)
    argv = [sys.executable, "-m", "celery", "-A", "worker.celery_adapter.entry", "worker",
            "-Q", "cpu",
            "-c", "1", "-P", "prefork", "-n", f"cpu-{time.monotonic_ns()}@test",
            "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with log.open("ab") as out:
        return subprocess.Popen(argv, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory, engine_cache: Path) -> Path:
    """Data dir of a worker that judged submission 41 (the course baseline, AC on t01)."""
    data = tmp_path_factory.mktemp("tasks-logging")
    (data / "cache").symlink_to(engine_cache)  # the session's prepared hw4-mini inputs
    sender = Celery("tasks-logging-test")
    sender.conf.update(embedded_broker(data))
    payload = {"submission_id": 41, "attempt": 1, "job": "k41", "language": "c-program",
               "files": {"hw4.c": base64.b64encode(SOURCE.read_bytes()).decode()},
               "suite": "hw4-mini", "tests": ["t01"], "seed": None}
    sender.send_task("flashjudge.judge", kwargs={"payload": payload}, queue="cpu")
    worker = start_cpu_worker(data, data / "worker.log")
    try:
        wait_for(lambda: any(name in ("flashjudge.record_result", "flashjudge.record_failure")
                             for name, _ in control_messages(data)), 180, "the judge's result")
    finally:
        kill_group(worker)  # nothing left to finish: the result is sent
    return data


def test_the_judge_tasks_log_lines_carry_the_submission_id(judged: Path) -> None:
    lines = json_lines(judged / "worker.log")
    about = [line for line in lines if line["logger"] == "worker.celery_adapter.tasks"]
    assert [line["msg"].split(":")[0] for line in about] == ["judging attempt 1", "judged"]
    assert all(line["submission_id"] == "41" and line["level"] == "INFO" for line in about)
    assert "1/1 tests passed" in about[-1]["msg"]
    started = [line for line in lines if "ready" in line["msg"]]
    assert started and "submission_id" not in started[0]  # lines about no submission: untagged


def test_the_result_names_the_worker_its_gpu_and_the_judge_seconds(judged: Path) -> None:
    (submission_id, attempt, body, job), = [args for name, args in control_messages(judged)
                                            if name == "flashjudge.record_result"]
    assert (submission_id, attempt, job, body["passed"]) == (41, 1, "k41", 1)
    worker = body["worker"]
    assert worker["hostname"] == f"cpu@{socket.gethostname()}"  # as in its heartbeats
    assert worker["gpu"] is None  # the CPU track
    tests_s = sum(t["seconds"] for t in body["tests"])
    assert tests_s <= worker["seconds"] < 120


def test_the_result_carries_each_tests_start_up_floor(judged: Path) -> None:
    """The start-up floor: the calibration program's time on each judged test's input."""
    body, = [args[2] for name, args in control_messages(judged)
             if name == "flashjudge.record_result"]
    floor = body["floor"]
    assert floor["error"] is None and list(floor["tests"]) == ["t01"]
    assert floor["tests"]["t01"]["seconds"] > 0 and floor["tests"]["t01"]["runs"] == 3
    assert "reads the test's input" in floor["what"]
