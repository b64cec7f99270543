"""Stopping `flashjudge serve` for real: the terminal's Ctrl-C (SIGINT to the whole process
group), `kill` of the group as `make run` leaves it (SIGTERM to every process in it), and
`flashjudge stop`. Each must end serve and every process it started, none left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.config import Settings
from app.db.session import get_engine
from tests.app.utils.processes import REPO, descendants, wait_for

pytestmark = pytest.mark.slow
# Stopping waits for no judging in hand, so it ends within seconds; this bound only tells a stop
# from the hang it replaces (a worker in "warm shutdown" for minutes).
STOPPED_WITHIN_S = 30


def alive(pid: int) -> bool:
    """A process that exists and is no zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def both_workers_ready(log: Path) -> bool:
    text = log.read_text()
    return "control@" in text and "cpu@" in text and text.count(" ready.") >= 2


def start_serve(root: Path) -> tuple[subprocess.Popen, Path, Settings]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLASHJUDGE_")}
    env.update(FLASHJUDGE_DATA_DIR=str(root / "data"), FLASHJUDGE_HEARTBEAT_S="0.5",
               PYTHONPATH=str(REPO), PATH=f"{root}:{env['PATH']}")
    (root / "nvidia-smi").write_text("#!/bin/sh\nexit 1\n")  # the CPU track on any machine
    (root / "nvidia-smi").chmod(0o755)
    log = root / "serve.log"
    with log.open("wb") as out:  # its own group, as a terminal or `make run` gives it
        proc = subprocess.Popen(
            [sys.executable, "-m", "flashjudge_cli.main", "serve", "--port", "0"], env=env,
            cwd=REPO, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    settings = Settings(environment="test", data_dir=root / "data")
    wait_for(lambda: proc.poll() is not None or "judging on" in log.read_text(), 120,
             "serve to start its workers")
    wait_for(lambda: proc.poll() is not None or both_workers_ready(log), 120,
             "both workers to be ready")
    assert proc.poll() is None, log.read_text()[-3000:]
    return proc, log, settings


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm-group", "flashjudge-stop"])
def test_serve_stops_with_every_child(tmp_path: Path, how: str):
    if subprocess.run(["which", "bwrap"], capture_output=True).returncode:
        pytest.skip("bubblewrap (bwrap) is not installed: serve refuses to start judge workers")
    proc, log, settings = start_serve(tmp_path)
    children = [pid for pid, _name in descendants(proc.pid)]
    assert len(children) >= 3  # the control worker, the judge and the judge's pool child
    try:
        if how == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)
        elif how == "sigterm-group":
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            said = subprocess.run(
                [sys.executable, "-m", "flashjudge_cli.main", "stop"], cwd=REPO, text=True,
                capture_output=True, timeout=STOPPED_WITHIN_S + 10,
                env={**os.environ, "FLASHJUDGE_DATA_DIR": str(tmp_path / "data"),
                     "PYTHONPATH": str(REPO)})
            assert said.returncode == 0, said.stderr
            assert f"stopped flashjudge serve (pid {proc.pid})" in said.stdout
        proc.wait(timeout=STOPPED_WITHIN_S)
        wait_for(lambda: not any(alive(pid) for pid in children), 5, "no process left")
        assert "stopped" in log.read_text().splitlines()[-1]
        assert not (tmp_path / "data" / "serve.pid").exists()
    finally:
        for pid in [proc.pid, *children]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        get_engine(settings.db_url).dispose()


def test_stop_without_a_running_serve_says_so(tmp_path: Path):
    said = subprocess.run(
        [sys.executable, "-m", "flashjudge_cli.main", "stop"], cwd=REPO, text=True,
        capture_output=True, timeout=60,
        env={**os.environ, "FLASHJUDGE_DATA_DIR": str(tmp_path), "PYTHONPATH": str(REPO)})
    assert said.returncode == 1
    assert f"no flashjudge serve is running with data dir {tmp_path}" in said.stderr
