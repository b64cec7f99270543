"""One submission, one GPU model, on the worker: its limits, its model queue, forwarding.

The process tests run real Celery workers on the embedded broker. This machine has no GPU, so the
"RTX 3070" worker is a worker pinned to the UUID of a GPU that its driver (nvidia-smi, on a node
without NVML's Python package, where a worker learns its GPU at start) names that model:
everything after that question is the real worker.
"""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from flashjudge.contract import Attempt, JudgePayload
from tests.app.utils.processes import REPO, kill_group, wait_for
from tests.embedded_broker import embedded_broker
from worker.celery_adapter.gpu_model import belongs_elsewhere, judged_suite, queues_to_add

RTX = "NVIDIA GeForce RTX 3070"
GTX = "NVIDIA GeForce GTX 1080"


def job(language: str = "cuda-program", gpu_model: str | None = None) -> JudgePayload:
    return JudgePayload(Attempt(5, 1, "k"), language, {"hw4.cu": b"int main(){}"}, "hw4",
                        gpu_model=gpu_model)


def test_a_gpu_worker_judges_with_its_models_limits_and_the_cpu_track_with_the_suites() -> None:
    suite = judged_suite(job(), RTX)
    assert suite is not None and {t.time_limit_s for t in suite.tests} == {1.0, 3.0, 5.0}
    assert judged_suite(job("c-program"), RTX) is None  # the pipeline loads the suite as shipped


def test_a_job_of_another_model_is_not_judged_here() -> None:
    assert belongs_elsewhere(job(gpu_model=GTX), RTX)
    assert not belongs_elsewhere(job(gpu_model="GeForce RTX 3070"), RTX)
    assert not belongs_elsewhere(job(gpu_model=None), RTX)  # a first judging: any model
    assert not belongs_elsewhere(job("c-program", gpu_model=GTX), "cpu")


def test_only_a_worker_of_the_gpu_queue_adds_its_model_queue() -> None:
    assert queues_to_add({"gpu"}, RTX) == ["gpu.rtx-3070"]
    assert queues_to_add({"gpu", "gpu.rtx-3070"}, RTX) == []
    assert queues_to_add({"cpu"}, RTX) == [] and queues_to_add({"gpu"}, "cpu") == []


def messages(data: Path, queue: str) -> list[tuple[str, Any]]:
    """(task name, first argument or payload) of the messages waiting on one queue."""
    out = []
    for path in sorted((data / "broker" / "queue").glob(f"*.{queue}.msg")):
        message = json.loads(path.read_text())
        args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
        out.append((message["headers"]["task"], kwargs.get("payload") or args))
    return out


FAKE_UUID = "GPU-fake-3070"


def fake_nvidia_smi(folder: Path, name: str) -> Path:
    """A bin folder whose nvidia-smi lists one GPU of this model, and a pynvml that does not
    import (so a GPU node's real NVML is not asked instead)."""
    folder.mkdir()
    tool = folder / "nvidia-smi"
    tool.write_text(f"#!/bin/sh\necho '0, {FAKE_UUID}, {name}, 00000000:01:00.0, 8.6, 580.65'\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    (folder / "pynvml.py").write_text('raise ImportError("no NVML here: nvidia-smi answers")\n')
    return folder


def start_worker(data: Path, queues: str, bin_dir: Path | None = None) -> subprocess.Popen:
    """A worker pinned to the fake GPU of `bin_dir`'s nvidia-smi, or to none."""
    path = f"{bin_dir}:{os.environ['PATH']}" if bin_dir else os.environ["PATH"]
    python_path = f"{bin_dir}:{REPO}" if bin_dir else str(REPO)
    env = {**os.environ, "FLASHJUDGE_DATA_DIR": str(data), "FLASHJUDGE_QUEUES": queues,
           "CUDA_VISIBLE_DEVICES": FAKE_UUID if bin_dir else "", "FLASHJUDGE_HEARTBEAT_S": "5",
           "PYTHONPATH": python_path, "PATH": path}
    env.pop("FLASHJUDGE_BROKER_URL", None)
    argv = [sys.executable, "-m", "celery", "-A", "worker.celery_adapter.entry", "worker", "-Q",
            queues, "-c", "1", "-P", "solo", "-n", f"model-{time.monotonic_ns()}@test",
            "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with (data / "worker.log").open("ab") as out:
        return subprocess.Popen(argv, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def sender(data: Path) -> Celery:
    app = Celery("gpu-model-test")
    app.conf.update(embedded_broker(data))
    return app


def bad_upload(gpu_model: str | None, submission_id: int = 5) -> dict[str, Any]:
    """A cuda-program whose file name is refused: CE before any build, so no GPU is needed, and
    its tests carry the limits the worker applied."""
    files = {".hidden.cu": b"int main(){}"}
    return JudgePayload(Attempt(submission_id, 1, "k"), "cuda-program", files, "hw4", ["t01"],
                        gpu_model=gpu_model).to_dict()


@pytest.mark.slow
def test_a_worker_forwards_jobs_of_another_model_to_that_models_queue(tmp_path: Path) -> None:
    app = sender(tmp_path)
    app.send_task("flashjudge.judge", kwargs={"payload": bad_upload(RTX)}, queue="gpu")
    refine = {**bad_upload(RTX, 7), "first_pass": {"t01": {"seconds": 0.2, "passed": True}}}
    app.send_task("flashjudge.refine_timing", kwargs={"payload": refine}, queue="gpu-low")
    worker = start_worker(tmp_path, "gpu")  # no nvidia-smi here: a worker without that GPU
    try:
        wait_for(lambda: len(messages(tmp_path, "gpu.rtx-3070")) == 2, 60, "the forwarded jobs")
    finally:
        kill_group(worker)
    forwarded = dict(messages(tmp_path, "gpu.rtx-3070"))
    assert forwarded == {"flashjudge.judge": bad_upload(RTX), "flashjudge.refine_timing": refine}
    judged = [name for name, _ in messages(tmp_path, "control")
              if name != "flashjudge.worker_status"]
    assert judged == []  # neither judged nor refined here: no result, no progress, no timing


@pytest.mark.slow
def test_a_worker_consumes_its_models_queue_and_applies_its_limits(tmp_path: Path) -> None:
    app = sender(tmp_path)
    app.send_task("flashjudge.judge", kwargs={"payload": bad_upload(RTX, 6)},
                  queue="gpu.rtx-3070")
    worker = start_worker(tmp_path, "gpu", fake_nvidia_smi(tmp_path / "bin", RTX))
    try:
        wait_for(lambda: any(n == "flashjudge.record_result"
                             for n, _ in messages(tmp_path, "control")), 90, "the result")
    finally:
        kill_group(worker)
    result = next(args for n, args in messages(tmp_path, "control")
                  if n == "flashjudge.record_result")
    submission_id, _attempt, body = result[0], result[1], result[2]
    assert submission_id == 6 and body["verdict"] == "CE"
    assert body["worker"]["gpu"] == RTX
    assert body["tests"][0]["time_limit_s"] == 1.0  # t01: 2 s on the GTX 1080, 1 s here
