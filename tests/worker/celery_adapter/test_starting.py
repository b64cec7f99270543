"""A worker that is starting says so: `flashjudge worker` announces each worker process before
its preflight, and the process's own heartbeat (state "": it takes jobs) follows as soon as it is
up. Read from a real Redis, with a real CPU worker (no control worker: the messages stay queued
where this test reads them)."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.redis_claim import claimed_redis_url

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def broker() -> Iterator[str]:
    with claimed_redis_url() as url:
        yield url


def statuses(url: str) -> list[dict]:
    """The worker_status messages waiting on `control`, oldest first."""
    client = redis.Redis.from_url(url)
    found = []
    for raw in reversed(client.lrange("control", 0, -1)):
        message = json.loads(raw)
        if message["headers"]["task"] == "flashjudge.worker_status":
            args = json.loads(base64.b64decode(message["body"]))[0]
            found.append(args[0])
    return found


def test_the_worker_says_it_is_starting_then_that_it_takes_jobs(broker: str,
                                                                 tmp_path: Path) -> None:
    env = {**os.environ, "FLASHJUDGE_BROKER_URL": broker, "FLASHJUDGE_DATA_DIR": str(tmp_path),
           "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "flashjudge_cli.main", "worker", "--gpus",
                             "none"], env=env, cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while not any(s["state"] == "" for s in statuses(broker)):
            assert proc.poll() is None, "the worker exited"
            assert time.monotonic() < deadline, f"no ready heartbeat: {statuses(broker)}"
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    said = statuses(broker)
    states = [s["state"] for s in said]
    assert states[:2] == ["starting (preflight)", "starting (connecting to the broker)"]
    assert {s["hostname"].split("@")[0] for s in said} == {"cpu"}  # one row, replaced
    assert said[0]["languages"] == [] and said[0]["queues"] == "cpu"
    ready = next(s for s in said if s["state"] == "")
    assert ready["languages"] == ["c-program"] and ready["pid"] != proc.pid
