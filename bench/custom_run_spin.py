"""Custom runs beside timing refinements on the CPU track: how many custom-run
task executions a real Celery worker makes, and how many runs and refinements finish, in a fixed
time. Before the fix a run counted the refinements waiting on `cpu` as judgings and put itself
back up to 10,000 times, so neither kind progressed.

Uses a Redis database of its own (claimed with the tests' lock key, flushed) and a worker
started from the checkout PYTHONPATH names, so PYTHONPATH=/path/to/other compares versions.

    PYTHONPATH=. .venv/bin/python bench/custom_run_spin.py [--runs 4] [--seconds 60]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import redis
from celery import Celery
from rich.console import Console
from rich.table import Table

from flashjudge.contract import (
    Attempt,
    CustomRunPayload,
    JudgePayload,
    RefinePayload,
    celery_config,
)
from kernels.fileformat import write_input

BROKEN = {"hw4.c": b"int main( {\n"}  # a refinement of it ends at once, with an error
LOCK_KEY = "flashjudge:test-session"  # the tests' claim on a database (tests/redis_claim.py)


@contextlib.contextmanager
def claimed_redis(host: str) -> Iterator[str]:
    """A Redis database nobody else holds (the tests' protocol), emptied before and after."""
    token = f"bench-{os.getpid()}"
    for db in range(15, 0, -1):
        client = redis.Redis.from_url(f"{host}/{db}")
        if client.set(LOCK_KEY, token, nx=True, ex=3600):
            break
    else:
        raise SystemExit("every Redis database 1..15 is held by a test session")
    try:
        client.flushdb()
        client.set(LOCK_KEY, token, ex=3600)
        yield f"{host}/{db}"
    finally:
        client.flushdb()


def send_work(sender: Celery, data: Path, runs: int, refinements: int) -> None:
    """The app's messages: custom runs on custom-cpu (low priority), refinements on cpu."""
    rng = np.random.default_rng(5)
    for run_id in range(1, runs + 1):
        folder = data / "custom" / f"run{run_id}"
        folder.mkdir(parents=True)
        write_input(folder / "input.bin", *(rng.uniform(-3, 3, (2, 64, 32)).astype(np.float32)
                                            for _ in range(3)))
        run = CustomRunPayload(run_id=run_id, attempt=1, input_path=str(folder / "input.bin"),
                               output_path=str(folder / "reference.bin"), queue="custom-cpu")
        sender.send_task("flashjudge.custom_run", kwargs={"payload": run.to_dict()},
                         queue="custom-cpu", priority=9)
    for sub_id in range(1, refinements + 1):
        judged = JudgePayload(Attempt(sub_id, 1, "k"), "c-program", BROKEN, "hw4-mini", ["t01"])
        sender.send_task("flashjudge.refine_timing", queue="cpu", priority=9, kwargs={
            "payload": RefinePayload(judged, {"t01": {"seconds": 0.2, "passed": True}}).to_dict()})


def worker(data: Path, broker: str, log: Path) -> subprocess.Popen:
    env = {**os.environ, "FLASHJUDGE_DATA_DIR": str(data), "FLASHJUDGE_QUEUES": "cpu",
           "FLASHJUDGE_BROKER_URL": broker, "CUDA_VISIBLE_DEVICES": ""}
    argv = [sys.executable, "-m", "celery", "-A", "worker.celery_adapter.entry", "worker", "-Q",
            "custom-cpu,cpu", "-c", "1", "-P", "prefork", "-n", f"bench-{os.getpid()}@spin",
            "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with log.open("ab") as out:
        return subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=data)


def counts(client: redis.Redis, log: Path) -> tuple[int, int, int]:
    """(custom-run executions, custom runs recorded, refinements recorded)."""
    names = [json.loads(raw)["headers"]["task"] for raw in client.lrange("control", 0, -1)]
    executed = sum('"flashjudge.custom_run"' in line and "received" in line
                   for line in log.read_text(errors="replace").splitlines())
    return (executed, names.count("flashjudge.record_custom_run"),
            names.count("flashjudge.record_timing"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--refinements", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379", help="server (no db)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, claimed_redis(args.redis) as url:
        data, client = Path(tmp), redis.Redis.from_url(url)
        sender = Celery("bench-spin")
        sender.conf.update(celery_config(url, data))
        send_work(sender, data, args.runs, args.refinements)
        proc, start = worker(data, url, data / "worker.log"), time.monotonic()
        while time.monotonic() - start < args.seconds:
            if counts(client, data / "worker.log")[1:] == (args.runs, args.refinements):
                break
            time.sleep(0.5)
        took = time.monotonic() - start
        proc.terminate()
        proc.wait(60)
        if os.environ.get("KEEP_LOG"):
            shutil.copy(data / "worker.log", os.environ["KEEP_LOG"])
        executed, runs, refinements = counts(client, data / "worker.log")
    table = Table(title=f"{args.runs} custom runs + {args.refinements} refinements, one worker")
    for column in ("custom-run executions", "runs done", "refinements done", "seconds"):
        table.add_column(column)
    table.add_row(str(executed), f"{runs}/{args.runs}", f"{refinements}/{args.refinements}",
                  f"{took:.0f}")
    Console().print(table)


if __name__ == "__main__":
    main()
