"""Fixtures of the Slurm tests: one throwaway cluster for the session (tests/slurm/cluster.py),
skipped with its reason where Slurm cannot be installed or started; the job that reaches its
time limit, submitted as soon as the cluster is up so its 60-90 s pass while the others run; and
a judging service whose judge workers are Slurm jobs (tests/slurm/judging.py)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.session import get_engine
from app.main import create_app
from testcases.prepared import prepare_suite
from testcases.suite import load_suite
from tests.app.utils.processes import stop
from tests.pg_schema import PG_URL, create_schema, drop_schema
from tests.redis_claim import claimed_redis_url
from tests.service_fixtures import TEST_SECRET
from tests.slurm.cluster import SlurmCluster, SlurmUnavailable, start_cluster
from tests.slurm.judging import (
    JUDGED_TESTS,
    Judging,
    start_control,
    write_env_file,
)

LOGGER = Path(__file__).with_name("signal_logger.py")
WARN_AHEAD_S = 40  # the time-limit job's warning: USR1 this long before its 1-minute limit


def logger_job(*args: str) -> str:
    """The --wrap of a job whose batch process is the signal logger (exec: it is the batch
    shell's process, so batch-step signals reach it)."""
    return f"exec {sys.executable} {LOGGER} {' '.join(args)}"


@pytest.fixture(scope="session")
def slurm() -> Iterator[SlurmCluster]:
    try:
        cluster = start_cluster()
    except SlurmUnavailable as exc:
        pytest.skip(f"no Slurm here: {exc}")
    yield cluster
    cluster.stop()


@dataclass(frozen=True)
class TimedJob:
    """A job sent to reach its time limit."""

    job_id: str
    output: Path  # its stdout: the signal logger's lines


@pytest.fixture(scope="session")
def time_limit_job(slurm: SlurmCluster, tmp_path_factory: pytest.TempPathFactory) -> TimedJob:
    """A 1-minute job warned with USR1 WARN_AHEAD_S before its limit, that ignores every signal:
    Slurm must end it itself. Test modules that use the cluster ask for it first, so it runs
    while they do."""
    output = tmp_path_factory.mktemp("time-limit") / "job.out"
    job_id = slurm.sbatch("--time=1", f"--signal=B:USR1@{WARN_AHEAD_S}", "--output", str(output),
                          "--job-name=time-limit", "--wrap", logger_job("--child"))
    return TimedJob(job_id, output)


@pytest.fixture(scope="session")
def judging(slurm: SlurmCluster, tmp_path_factory: pytest.TempPathFactory,
            engine_cache: Path) -> Iterator[Judging]:
    """The judging service whose workers the Slurm tests submit (tests/slurm/judging.py)."""
    if shutil.which("bwrap") is None:
        pytest.skip("judging in a Slurm job needs bubblewrap on this machine")
    folder = tmp_path_factory.mktemp("slurm-judging")
    prepare_suite(load_suite("hw4-mini"), engine_cache, device="cpu",
                  tests=JUDGED_TESTS.split(","))
    data = folder / "data"
    data.mkdir()
    (data / "cache").symlink_to(engine_cache)
    schema = create_schema("fj_slurm")
    with claimed_redis_url() as redis_url:
        settings = Settings(environment="test", secret_key=TEST_SECRET, data_dir=data,
                            suite="hw4-mini", judge_tests=JUDGED_TESTS,
                            database_url=PG_URL.format(schema=schema), broker_url=redis_url,
                            submit_interval_s=0, sweep_interval_s=0, migrate_on_start=False,
                            refine_timing=False, custom_run_queue="cpu")
        upgrade(settings.db_url)
        control_log = folder / "control.log"
        control = start_control(settings, control_log)
        client = TestClient(create_app(settings))
        client.__enter__()
        service = Judging(settings, client, folder, control_log)
        write_env_file(service.env_file, settings, data)
        try:
            yield service
        finally:
            client.__exit__(None, None, None)
            stop(control)
            get_engine(settings.db_url).dispose()
            drop_schema(schema)
