"""Custom runs and timing refinements both make progress on a Redis broker, without spinning
(on the CPU track a custom run counted the refinements waiting on `cpu` as
judgings and put itself back up to 10,000 times: 2 runs cost 20,002 task executions, 24 runs
made 178 a second and neither kind progressed). A real Celery worker reads custom-cpu first, the
worst case, on a Redis database of its own: the session's may still hold judge messages earlier
tests queued for no worker, which outrank the low-priority refinements and took the whole deadline
in a full run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from celery import Celery

from flashjudge.contract import (
    LOW_PRIORITY,
    Attempt,
    CustomRunPayload,
    JudgePayload,
    RefinePayload,
    celery_config,
)
from tests.app.utils.processes import REPO, kill_group, wait_for
from tests.chaos.deployment import json_lines
from tests.redis_claim import claimed_redis_url
from tests.worker.celery_adapter.test_custom_run import input_file

pytestmark = pytest.mark.slow
RUNS, REFINEMENTS = 4, 4


@pytest.fixture
def own_redis_url() -> Iterator[str]:
    with claimed_redis_url() as url:
        yield url


def start_redis_worker(data: Path, broker: str, log: Path) -> subprocess.Popen:
    env = {**os.environ, "FLASHJUDGE_DATA_DIR": str(data), "FLASHJUDGE_QUEUES": "cpu",
           "FLASHJUDGE_BROKER_URL": broker, "CUDA_VISIBLE_DEVICES": "",
           "FLASHJUDGE_HEARTBEAT_S": "5", "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "celery", "-A", "worker.celery_adapter.entry", "worker", "-Q",
            "custom-cpu,cpu", "-c", "1", "-P", "prefork", "-n", f"cpu-{time.monotonic_ns()}@t",
            "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with log.open("ab") as out:
        return subprocess.Popen(argv, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def recorded(client: redis.Redis) -> list[str]:
    """Task names of the messages the worker sent to `control` (heartbeats left out)."""
    names = [json.loads(raw)["headers"]["task"] for raw in client.lrange("control", 0, -1)]
    return [n for n in names if n != "flashjudge.worker_status"]


def refinement(submission_id: int) -> dict:
    broken = {"hw4.c": b"int main( {\n"}  # no longer builds: refined (with an error) at once
    judged = JudgePayload(Attempt(submission_id, 1, "k"), "c-program", broken, "hw4-mini",
                          ["t01"])
    return RefinePayload(judged, {"t01": {"seconds": 0.2, "passed": True}}).to_dict()


def test_custom_runs_and_refinements_both_finish_without_spinning(tmp_path, own_redis_url):
    redis_url = own_redis_url
    client = redis.Redis.from_url(redis_url)
    sender = Celery("priority-test")
    sender.conf.update(celery_config(redis_url, tmp_path))
    for run_id in range(1, RUNS + 1):
        folder = tmp_path / "custom" / f"run{run_id}"
        folder.mkdir(parents=True)
        input_file(folder / "input.bin", 2, 64, 32)
        run = CustomRunPayload(run_id=run_id, attempt=1, input_path=str(folder / "input.bin"),
                               output_path=str(folder / "reference.bin"), queue="custom-cpu")
        sender.send_task("flashjudge.custom_run", kwargs={"payload": run.to_dict()},
                         queue="custom-cpu", priority=LOW_PRIORITY)
    for submission_id in range(1, REFINEMENTS + 1):
        sender.send_task("flashjudge.refine_timing", queue="cpu", priority=LOW_PRIORITY,
                         kwargs={"payload": refinement(submission_id)})
    worker = start_redis_worker(tmp_path, redis_url, tmp_path / "worker.log")
    try:
        # at least once each: an outcome the control side has not marked (none runs here) may
        # be sent again from the worker's outbox, which the control side records once
        wanted = Counter({"flashjudge.record_custom_run": RUNS,
                          "flashjudge.record_timing": REFINEMENTS})
        try:
            wait_for(lambda: Counter(recorded(client)) >= wanted,
                     180, f"{RUNS} custom runs and {REFINEMENTS} refinements recorded")
        except AssertionError as exc:
            tail = (tmp_path / "worker.log").read_text(errors="replace")[-3000:]
            raise AssertionError(f"{exc}; recorded {Counter(recorded(client))}; "
                                 f"the worker's log ends:\n{tail}") from None
    finally:
        kill_group(worker)
    yields = [line for line in json_lines(tmp_path / "worker.log")
              if str(line.get("msg", "")).startswith("custom run ")]
    print(f"\n{RUNS} custom runs, {REFINEMENTS} refinements: {len(yields)} yields, "
          f"{RUNS + len(yields)} custom-run executions")
    assert len(yields) <= REFINEMENTS  # bounded (none here: no judging waited at all)
