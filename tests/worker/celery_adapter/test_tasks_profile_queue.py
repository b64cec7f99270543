"""A profile never starts ahead of a waiting judging: a real Celery worker on the embedded broker.

The worker reads `gpu-low` FIRST here (-Q gpu-low,gpu), the worst case a round-robin broker can
produce; the profile must still give way to the judging waiting on `gpu` and run after it.
"""

from __future__ import annotations

import base64
import json
import os
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
BROKEN = base64.b64encode(b"int main( {\n").decode()  # a compile error: judged in a second


def control_messages(data: Path) -> list[tuple[str, list[Any]]]:
    """(task name, args) of every message on the control queue, in the order sent."""
    out = []
    for path in sorted((data / "broker" / "queue").glob("*.control.msg")):
        message = json.loads(path.read_text())
        body = json.loads(base64.b64decode(message["body"]))
        out.append((message["headers"]["task"], body[0]))
    return [m for m in out if m[0] != "flashjudge.worker_status"]


def start_gpu_worker(data: Path, log: Path) -> subprocess.Popen:
    env = {**os.environ, "FLASHJUDGE_DATA_DIR": str(data), "FLASHJUDGE_QUEUES": "gpu",
           "CUDA_VISIBLE_DEVICES": "", "FLASHJUDGE_HEARTBEAT_S": "5", "PYTHONPATH": str(REPO)}
    env.pop("FLASHJUDGE_BROKER_URL", None)
    argv = [sys.executable, "-m", "celery", "-A", "worker.celery_adapter.entry", "worker", "-Q",
            "gpu-low,gpu", "-c", "1", "-P", "prefork", "-n", f"gpu-{time.monotonic_ns()}@test",
            "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with log.open("ab") as out:
        return subprocess.Popen(argv, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def test_a_profile_gives_way_to_a_waiting_judging(tmp_path: Path):
    sender = Celery("profile-order-test")
    sender.conf.update(embedded_broker(tmp_path))
    judge = {"submission_id": 1, "attempt": 1, "job": "k1", "language": "c-program",
             "files": {"hw4.c": BROKEN}, "suite": "hw4-mini", "tests": ["t01"], "seed": None}
    sender.send_task("flashjudge.profile", kwargs={"payload": {
        **judge, "submission_id": 2, "profile_id": 7, "test_id": "t01"}}, queue="gpu-low",
        priority=9)
    sender.send_task("flashjudge.judge", kwargs={"payload": judge}, queue="gpu")
    worker = start_gpu_worker(tmp_path, tmp_path / "worker.log")
    try:
        wait_for(lambda: any(name == "flashjudge.record_profile"
                             for name, _ in control_messages(tmp_path)), 90,
                 "the profile's outcome")
    finally:
        kill_group(worker)  # nothing to finish: its messages are all sent
    messages = control_messages(tmp_path)
    names = [name for name, _ in messages]
    judged = [i for i, (name, args) in enumerate(messages)
              if name != "flashjudge.record_profile" and args[0] == 1]
    assert judged and names[judged[-1]] in ("flashjudge.record_result",
                                            "flashjudge.record_failure")
    assert judged[-1] < names.index("flashjudge.record_profile")  # judged completely first
    profile_id, outcome = dict(control_messages(tmp_path))["flashjudge.record_profile"]
    assert profile_id == 7 and outcome["profile"] is None
    assert "GPU device node" in outcome["error"]  # no GPU here: the page says why
