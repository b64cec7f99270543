"""A judging service whose judge workers are Slurm jobs of the tests' cluster.

The control side is real and local: a PostgreSQL schema, a Redis database of this session's
own, the control worker as a process, the app in this process (its sweeper off: the counts
must come from the drain alone). The judge workers are `flashjudge worker` itself, submitted
with deploy/slurm/flashjudge-worker.sbatch: its env file (mode 600) names the broker, and the
CPU track is what it judges (no GPU granted). Counting reads the database (verdicts, attempts,
lost and failed counts) and the logs: the control worker's "recorded verdict" lines and each
job's "judging attempt" lines.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.accounts import users
from app.core.config import Settings
from app.db.models import Submission, WorkerStatus
from app.wiring import wired_sessions
from flashjudge.contract import Status
from tests.app.utils.processes import REPO, settings_env
from tests.chaos.deployment import json_lines
from tests.slurm.cluster import SlurmCluster

TEMPLATE = REPO / "deploy" / "slurm" / "flashjudge-worker.sbatch"
SOURCE = (REPO / "tests" / "app" / "utils" / "seq_attention.c").read_bytes()  # AC on hw4-mini
JUDGED_TESTS = "t01,t02,t03"
DRAIN_S, HANDBACK_S = 60, 30  # the jobs' drain and hand-back (a site's: 600 and 60)


def slow_source(seconds: int) -> bytes:
    """The same program, sleeping `seconds` in each test (under the tests' 10 s limits)."""
    return f"#define SLEEP_S {seconds}\n".encode() + SOURCE


@dataclass
class Judging:
    """The service, and the worker jobs sent to judge for it."""

    settings: Settings  # the control side's
    client: TestClient  # the app
    folder: Path  # env file, job outputs, logs
    control_log: Path  # the control worker's JSON lines
    students: int = 0  # made so far

    def submit(self, source: bytes = SOURCE) -> int:
        """A submission by a student of its own (a student's newer one supersedes the queued)."""
        self.students += 1
        token = add_student(self.settings, f"slurm-student{self.students}")
        response = self.client.post(
            "/api/submissions", headers={"Authorization": f"Bearer {token}"},
            data={"language": "c-program"}, files=[("files", ("hw4.c", source))])
        assert response.status_code == 202, response.text
        return int(response.json()["id"])

    def worker_job(self, slurm: SlurmCluster, name: str, *sbatch: str, **env: str
                   ) -> tuple[str, Path]:
        """`flashjudge worker` as a job of the template, on the CPU track; its id and output."""
        output = self.folder / f"{name}.out"
        job_id = slurm.sbatch("--gres=none", "--cpus-per-task=2", "--mem=2G",
                              f"--signal=B:TERM@{DRAIN_S}", f"--job-name={name}", "--output",
                              str(output), *sbatch, str(TEMPLATE),
                              FLASHJUDGE_ENV_FILE=str(self.env_file), FLASHJUDGE_HOME=str(REPO),
                              FLASHJUDGE_VENV=sys.prefix, **env)
        return job_id, output

    @property
    def env_file(self) -> Path:
        return self.folder / "worker.env"

    def rows(self, ids: list[int]) -> list[Submission]:
        with wired_sessions(self.settings.db_url)() as db:
            found = list(db.scalars(select(Submission).where(Submission.id.in_(ids))
                                    .order_by(Submission.id)))
            db.expunge_all()
            return found

    def row(self, sub_id: int) -> Submission:
        return self.rows([sub_id])[0]

    def live_worker(self, job_id: str) -> bool:
        """The job's worker sent a heartbeat saying it takes work."""
        with wired_sessions(self.settings.db_url)() as db:
            return any(w.slurm and w.slurm.get("job_id") == job_id and not w.state
                       for w in db.scalars(select(WorkerStatus)))

    def all_done(self, ids: list[int]) -> bool:
        return all(s.status == Status.DONE for s in self.rows(ids))

    def describe(self, ids: list[int]) -> str:
        """The submissions' rows, for a failing assert."""
        return "; ".join(f"{s.id}: {s.status} {s.verdict} attempt {s.attempt} error {s.error!r}"
                         for s in self.rows(ids))

    def verdicts_recorded(self) -> Counter[int]:
        """Stored verdicts per submission id, from the control worker's log."""
        return Counter(int(line["submission_id"]) for line in json_lines(self.control_log)
                       if str(line.get("msg", "")).startswith("recorded verdict"))

    def counts(self, ids: list[int]) -> dict[str, int]:
        """judged once (one stored verdict, AC), lost, SE, failures of these submissions."""
        rows, recorded = self.rows(ids), self.verdicts_recorded()
        return {"judged once": sum(recorded[s.id] == 1 and s.verdict == "AC" for s in rows),
                "lost": sum(s.lost for s in rows), "SE": sum(s.verdict == "SE" for s in rows),
                "failures": sum(s.failures for s in rows)}


def judgings_started(output: Path) -> Counter[tuple[int, int]]:
    """(submission id, attempt) -> how many judgings of it a job's worker started."""
    runs: Counter[tuple[int, int]] = Counter()
    for line in json_lines(output):
        message = str(line.get("msg", ""))
        if message.startswith("judging attempt "):
            runs[int(line["submission_id"]), int(message.split()[2].rstrip(":"))] += 1
    return runs


def handed_back(output: Path) -> list[str]:
    """The worker's hand-back lines in a job's output."""
    return [str(line.get("msg")) for line in json_lines(output)
            if str(line.get("msg", "")).startswith("handed attempt")]


def add_student(settings: Settings, name: str) -> str:
    """A student (token only); their personal token."""
    with wired_sessions(settings.db_url)() as db:
        user = users.add_user(db, name, "student", None)
        token = users.issue_token(db, user, "slurm", None)
        db.commit()
    return token


def write_env_file(path: Path, settings: Settings, data_dir: Path) -> None:
    """What a site puts in ~/.config/flashjudge/worker.env, mode 600."""
    path.write_text("\n".join([
        "# the tests' worker: their broker, suite and data folder",
        f"FLASHJUDGE_BROKER_URL={settings.broker_url}",
        f"FLASHJUDGE_SUITE={settings.suite}",
        f"FLASHJUDGE_DATA_DIR={data_dir}",
        "FLASHJUDGE_HEARTBEAT_S=1",
        f"FLASHJUDGE_SLURM_DRAIN_S={DRAIN_S}",
        f"FLASHJUDGE_SLURM_HANDBACK_S={HANDBACK_S}",
        "FLASHJUDGE_ENVIRONMENT=test",
        ""]))
    path.chmod(0o600)


def start_control(settings: Settings, log: Path) -> subprocess.Popen:
    """The control worker (records results next to the database), timing refinements off."""
    env = settings_env(settings, FLASHJUDGE_DATABASE_URL=settings.db_url,
                       FLASHJUDGE_REFINE_TIMING="false")
    argv = [sys.executable, "-m", "celery", "-A", "app.control.entry", "worker", "-Q", "control",
            "-c", "1", "-P", "solo", "-n", f"control-slurm-{os.getpid()}@test", "--loglevel",
            "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with log.open("ab") as out:
        return subprocess.Popen(argv, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
