"""`flashjudge serve` for real on a machine whose nvidia-smi lists two GPUs: one judge worker
per GPU, pinned, and a log that keeps to the news while nothing happens."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from app.core.config import Settings
from app.db.models import WorkerStatus
from app.db.session import get_engine
from app.submissions.dispatch import make_control_app
from app.wiring import wired_sessions
from tests.app.utils.processes import REPO, descendants, wait_for

pytestmark = pytest.mark.slow
FAKE_SMI = """#!/bin/sh
case "$*" in
  *-L*) echo "GPU 0: Fake GPU (UUID: GPU-0)"; echo "GPU 1: Fake GPU (UUID: GPU-1)";;
  *query-gpu=index,uuid*) echo "0, GPU-0aa, Fake GPU, 00000000:01:00.0"
                          echo "1, GPU-1bb, Fake GPU, 00000000:02:00.0";;
  *) exit 1;;
esac
"""
HEARTBEATS = 6  # idle heartbeats the log is read over


@dataclass
class Served:
    """A running `flashjudge serve` and where it writes."""

    proc: subprocess.Popen  # the serve process
    settings: Settings  # pointing at its data dir (SQLite, embedded broker)
    log: Path  # its stdout and stderr, workers' included


def worker_rows(settings: Settings) -> dict[str, WorkerStatus]:
    with wired_sessions(settings.db_url)() as db:
        rows = list(db.scalars(select(WorkerStatus)))
        for row in rows:
            db.expunge(row)
    return {r.hostname.split("@")[0]: r for r in rows}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    if subprocess.run(["which", "bwrap"], capture_output=True).returncode:
        pytest.skip("bubblewrap (bwrap) is not installed: serve refuses to start judge workers")
    root = tmp_path_factory.mktemp("serve2gpu")
    (root / "bin").mkdir()
    (root / "bin" / "nvidia-smi").write_text(FAKE_SMI)
    (root / "bin" / "nvidia-smi").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLASHJUDGE_")}
    env.update(PATH=f"{root / 'bin'}:{env['PATH']}", FLASHJUDGE_DATA_DIR=str(root / "data"),
               FLASHJUDGE_HEARTBEAT_S="0.5", FLASHJUDGE_SWEEP_INTERVAL_S="0",
               PYTHONPATH=str(REPO))
    settings = Settings(environment="test", data_dir=root / "data")
    log = root / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "flashjudge_cli.main", "serve", "--port", "0"],
            env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: proc.poll() is not None or "judging on" in log.read_text(), 120,
                 "serve to migrate the database and start its workers")
        wait_for(lambda: proc.poll() is not None or {"gpu0", "gpu1"} <= set(
            worker_rows(settings)), 120, "both GPU workers' heartbeats")
        assert proc.poll() is None, log.read_text()[-3000:]
        yield Served(proc, settings, log)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=150)
        get_engine(settings.db_url).dispose()


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def test_serve_starts_one_pinned_worker_per_gpu(served: Served):
    judges: dict[str, str] = {}
    for pid, _name in descendants(served.proc.pid):
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"worker.celery_adapter.entry" in argv:
            name = argv[argv.index(b"-n") + 1].decode().split("@")[0]
            judges.setdefault(name, environ(pid)["CUDA_VISIBLE_DEVICES"])
    assert judges == {"gpu0": "GPU-0aa", "gpu1": "GPU-1bb"}  # by identity, not by index
    rows = worker_rows(served.settings)
    assert rows["gpu1"].gpu == "Fake GPU" and "cuda-program" in rows["gpu1"].languages
    assert "judging on 2 GPU(s): gpu0 Fake GPU (GPU-0aa), gpu1" in served.log.read_text()


def test_an_idle_service_logs_no_heartbeats_and_no_routine_warnings(served: Served):
    replies = make_control_app(served.settings).control.revoke(
        ["0123456789abcdef"], reply=True, timeout=10)  # what every rejudge sends
    assert len(replies) == 3  # the control worker and both judges handled it
    seen: list[object] = []

    def beats() -> bool:
        last = worker_rows(served.settings)["gpu0"].last_seen
        if not seen or seen[-1] != last:
            seen.append(last)
        return len(seen) > HEARTBEATS

    wait_for(beats, 60, f"{HEARTBEATS} heartbeats of an idle worker")
    text = served.log.read_text()
    assert "ready." in text  # the workers' own INFO lines are there
    assert "Task flashjudge.worker_status[" not in text, "a heartbeat was logged at INFO"
    assert "superuser privileges" not in text
    assert "as revoked in backend" not in text
