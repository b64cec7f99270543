"""Custom runs on a worker: the reference computation runs in a child process stopped at the
run's time limit, and a custom run never goes ahead of a judging waiting on the judge queue."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from celery import Celery

from flashjudge.contract import CustomRunPayload
from kernels.cpu_reference import attention_f64
from kernels.fileformat import open_input, write_input
from tests.app.utils.processes import REPO, kill_group, wait_for
from tests.embedded_broker import embedded_broker
from worker.celery_adapter.custom_run import computed

BROKEN = base64.b64encode(b"int main( {\n").decode()  # a compile error: judged in a second


def input_file(path: Path, B: int, N: int, d: int) -> Path:
    rng = np.random.default_rng(5)
    q, k, v = (rng.uniform(-3, 3, (B, N, d)).astype(np.float32) for _ in range(3))
    write_input(path, q, k, v)
    return path


def run_for(folder: Path, own: bool = False, **fields: Any) -> CustomRunPayload:
    return CustomRunPayload(run_id=3, attempt=1, input_path=str(folder / "input.bin"),
                            output_path=str(folder / "reference.bin"),
                            own_output_path=str(folder / "own.bin") if own else None, **fields)


def test_a_small_run_gets_its_reference_and_comparison(tmp_path: Path):
    input_file(tmp_path / "input.bin", 2, 64, 32)
    (tmp_path / "own.bin").write_bytes(np.zeros(2 * 64 * 32, np.float32).tobytes())
    outcome = computed(run_for(tmp_path, own=True), limit_s=120)
    assert outcome["error"] is None and outcome["reference"]
    assert (tmp_path / "reference.bin").stat().st_size == 2 * 64 * 32 * 4
    assert outcome["report"]["ok"] is False


def test_a_wrong_own_output_is_named_by_the_mistake_catalogue(tmp_path: Path):
    """The comparison says which classic mistake the output matches."""
    input_file(tmp_path / "input.bin", 2, 64, 32)
    data = open_input(tmp_path / "input.bin").data
    unscaled = attention_f64(data[:, 0] * np.sqrt(32), data[:, 1], data[:, 2])
    (tmp_path / "own.bin").write_bytes(unscaled.astype(np.float32).tobytes())
    outcome = computed(run_for(tmp_path, own=True), limit_s=120)
    assert outcome["report"]["mistake"]["name"] == "no_scale"
    assert outcome["report"]["mistake"]["line"].startswith("your output equals attention")


@pytest.mark.slow
def test_a_run_past_its_time_limit_is_stopped_with_a_message(tmp_path: Path):
    input_file(tmp_path / "input.bin", 64, 1024, 64)  # seconds of float64 work on 2 cores
    outcome = computed(run_for(tmp_path), limit_s=0.5)
    assert outcome["reference"] is None
    assert "longer than its limit of 0.5 s and was stopped" in outcome["error"]
    assert not (tmp_path / "reference.bin").exists() or (
        (tmp_path / "reference.bin").stat().st_size < 64 * 1024 * 64 * 4)


def control_messages(data: Path) -> list[tuple[str, list[Any]]]:
    out = []
    for path in sorted((data / "broker" / "queue").glob("*.control.msg")):
        message = json.loads(path.read_text())
        out.append((message["headers"]["task"], json.loads(base64.b64decode(message["body"]))[0]))
    return [m for m in out if m[0] != "flashjudge.worker_status"]


def start_cpu_worker(data: Path, log: Path) -> subprocess.Popen:
    env = {**os.environ, "FLASHJUDGE_DATA_DIR": str(data), "FLASHJUDGE_QUEUES": "cpu",
           "CUDA_VISIBLE_DEVICES": "", "FLASHJUDGE_HEARTBEAT_S": "5", "PYTHONPATH": str(REPO)}
    env.pop("FLASHJUDGE_BROKER_URL", None)
    argv = [sys.executable, "-m", "celery", "-A", "worker.celery_adapter.entry", "worker", "-Q",
            "custom-cpu,cpu", "-c", "1", "-P", "prefork", "-n", f"cpu-{time.monotonic_ns()}@t",
            "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with log.open("ab") as out:
        return subprocess.Popen(argv, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


@pytest.mark.slow
def test_a_custom_run_gives_way_to_a_waiting_judging(tmp_path: Path):
    """The worker reads custom-cpu FIRST (-Q custom-cpu,cpu), the worst case; the judging
    waiting on cpu must still be judged completely before the custom run is computed."""
    sender = Celery("custom-order-test")
    sender.conf.update(embedded_broker(tmp_path))
    folder = tmp_path / "custom" / "run3"
    folder.mkdir(parents=True)
    input_file(folder / "input.bin", 2, 64, 32)
    sender.send_task("flashjudge.custom_run", queue="custom-cpu", kwargs={
        "payload": run_for(folder, queue="custom-cpu").to_dict()})
    judge = {"submission_id": 1, "attempt": 1, "job": "k1", "language": "c-program",
             "files": {"hw4.c": BROKEN}, "suite": "hw4-mini", "tests": ["t01"], "seed": None}
    sender.send_task("flashjudge.judge", kwargs={"payload": judge}, queue="cpu")
    worker = start_cpu_worker(tmp_path, tmp_path / "worker.log")
    try:
        wait_for(lambda: any(name == "flashjudge.record_custom_run"
                             for name, _ in control_messages(tmp_path)), 120,
                 "the custom run's outcome")
    finally:
        kill_group(worker)
    names = [name for name, _ in control_messages(tmp_path)]
    assert names.index("flashjudge.record_result") < names.index("flashjudge.record_custom_run")
    run_id, attempt, outcome = dict(control_messages(tmp_path))["flashjudge.record_custom_run"]
    assert (run_id, attempt, outcome["error"]) == (3, 1, None)
