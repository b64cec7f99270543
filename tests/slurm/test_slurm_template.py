"""deploy/slurm/flashjudge-worker.sbatch run through the tests' Slurm with a stand-in for the
worker (FLASHJUDGE_WORKER_CMD: the signal logger): the job gets the env file's values as written,
only the GPUs Slurm granted, and node-local scratch; it refuses an env file others can read;
and the worker receives SIGTERM ahead of the job's end (`--signal=B:TERM@600`, the template's
own line), leaves on it, and the job ends COMPLETED before its limit."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from flashjudge_cli.commands.worker import STOP_GRACE_S
from tests.slurm.cluster import SlurmCluster
from tests.slurm.joblog import events, signals, wait_for_event
from worker.settings import WorkerSettings

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "deploy" / "slurm" / "flashjudge-worker.sbatch"
LOGGER = Path(__file__).with_name("signal_logger.py")
STAND_IN = f"{sys.executable} {LOGGER} --exit-on SIGTERM"  # a worker that drains at once
SHOWN = ("FLASHJUDGE_BROKER_URL", "FLASHJUDGE_MOTTO", "FLASHJUDGE_DATA_DIR",
         "FLASHJUDGE_INPUT_CACHE_GB", "CUDA_VISIBLE_DEVICES", "VIRTUAL_ENV")
ENV_FILE = """\
# the worker's secrets
FLASHJUDGE_BROKER_URL=redis://:s3cret$word@10.0.0.1:6379/0
FLASHJUDGE_MOTTO="judged once, lost $0"
"""
# the live tests ask for the time-limit job first, so its minute passes while they run
overlapping = pytest.mark.usefixtures("time_limit_job")


def sbatch_lines() -> dict[str, str]:
    return dict(re.findall(r"^#SBATCH --([a-z-]+)=(\S+)", TEMPLATE.read_text(), re.M))


def submit(slurm: SlurmCluster, tmp_path: Path, env_mode: int, *sbatch: str) -> tuple[str, Path]:
    """The template with the stand-in worker; its job id and output file."""
    env_file, output = tmp_path / "worker.env", tmp_path / "job.out"
    env_file.write_text(ENV_FILE)
    env_file.chmod(env_mode)
    gres = "--gres=gpu:1" if slurm.gpus else "--gres=none"
    job_id = slurm.sbatch(
        gres, "--output", str(output), *sbatch, str(TEMPLATE),
        FLASHJUDGE_ENV_FILE=str(env_file), FLASHJUDGE_HOME=str(REPO),
        FLASHJUDGE_VENV=sys.prefix, FLASHJUDGE_NODE_SCRATCH=str(tmp_path / "node-local"),
        FLASHJUDGE_WORKER_CMD=f"{STAND_IN} --env {' '.join(SHOWN)}")
    return job_id, output


def shown(output: Path) -> dict[str, str]:
    pairs = [e.what.removeprefix("env ").split("=", 1) for e in events(output)
             if e.what.startswith("env ")]
    return dict(pairs)


def test_the_drain_warning_covers_the_workers_stop_grace() -> None:
    """The template asks for SIGTERM to the batch process (`B:`), early enough for the worker
    to stop: its judge processes get STOP_GRACE_S to finish before it kills them."""
    signal_spec = sbatch_lines()["signal"]
    assert signal_spec.startswith("B:TERM@")
    assert int(signal_spec.split("@")[1]) > STOP_GRACE_S
    assert "exec " in TEMPLATE.read_text().splitlines()[-1]


@overlapping
def test_the_worker_gets_the_env_file_and_sigterm_before_the_end(slurm: SlurmCluster,
                                                                 tmp_path: Path) -> None:
    job_id, output = submit(slurm, tmp_path, 0o600, "--time=1")  # the template's B:TERM@600
    told = wait_for_event(output, "main", "got SIGTERM", 60)
    ended = slurm.wait_for(job_id, {"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED"}, 30)
    assert (ended.state, ended.reason) == ("COMPLETED", "None"), output.read_text()
    seen = shown(output)
    assert seen["FLASHJUDGE_BROKER_URL"] == "redis://:s3cret$word@10.0.0.1:6379/0"
    assert seen["FLASHJUDGE_MOTTO"] == "judged once, lost $0"  # as written: nothing expanded
    assert seen["FLASHJUDGE_DATA_DIR"].startswith(str(tmp_path / "node-local"))
    assert Path(seen["FLASHJUDGE_DATA_DIR"]).is_dir()
    assert seen["FLASHJUDGE_INPUT_CACHE_GB"] == "24"
    assert seen["VIRTUAL_ENV"] == sys.prefix
    assert seen["CUDA_VISIBLE_DEVICES"] == ("0" if slurm.gpus else "")
    assert ended.start is not None and told.at < ended.start + 60  # before the 1-minute limit
    # the warning alone, nothing from the limit (Slurm sends SIGCONT with a SIGTERM)
    assert [s for s in signals(output, "main") if s != "SIGCONT"] == ["SIGTERM"]
    assert "flashjudge-worker: job " + job_id in output.read_text()


@overlapping
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604], ids=oct)
def test_an_env_file_others_can_read_is_refused(slurm: SlurmCluster, tmp_path: Path,
                                                mode: int) -> None:
    job_id, output = submit(slurm, tmp_path, mode, "--time=1")
    ended = slurm.wait_for(job_id, {"COMPLETED", "FAILED"}, 30)
    assert ended.state == "FAILED"
    assert slurm.command("scontrol", "show", "job", job_id).stdout.count("ExitCode=78:0") == 1
    text = output.read_text()
    assert f"is open to others (mode {mode:o}): run chmod 600" in text
    assert events(output) == []  # the worker never started
    assert "s3cret" not in text


def test_the_readme_and_the_worker_know_every_variable_the_template_reads() -> None:
    """deploy/slurm/README.md's table names each knob of the template, and what the template
    hands the worker (FLASHJUDGE_DATA_DIR, ...) is a setting the worker reads."""
    read = set(re.findall(r"\$\{?(FLASHJUDGE_[A-Z_]+)", TEMPLATE.read_text()))
    readme = (TEMPLATE.parent / "README.md").read_text()
    table = set(re.findall(r"^\| `(FLASHJUDGE_[A-Z_]+)` \|", readme, re.M))
    assert read - table == {"FLASHJUDGE_BROKER_URL", "FLASHJUDGE_DATABASE_URL"}
    assert table <= read
    exported = set(re.findall(r"export (FLASHJUDGE_[A-Z_]+)=", TEMPLATE.read_text()))
    settings = {f"FLASHJUDGE_{name.upper()}" for name in WorkerSettings.model_fields}
    assert exported and exported <= settings, exported - settings
