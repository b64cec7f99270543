"""/healthz and /readyz against the real app, real databases, real brokers and real workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from app.accounts import users
from app.core.config import Settings
from app.db.models import Submission
from app.main import create_app
from app.wiring import wired_sessions
from tests.app.observability.live_service import REPO, make_settings, wait_until, worker_env
from tests.conftest import WorkerEnv


def test_healthz_answers_even_when_every_dependency_is_down(tmp_path: Path,
                                                            ready_env: Callable) -> None:
    settings = make_settings(tmp_path, database_url="postgresql+psycopg://nobody@127.0.0.1:1/none",
                             broker_url="redis://127.0.0.1:1/0")
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").json() == {"status": "alive"}
        ready = client.get("/readyz")
    assert ready.status_code == 503
    body = ready.json()
    assert body["status"] == "not ready"
    assert body["not_ready"] == ["database", "broker", "workers"]
    assert "refused" in body["checks"]["broker"]["detail"].lower()


def test_readyz_refuses_a_database_that_was_never_migrated(tmp_path: Path,
                                                            ready_env: Callable) -> None:
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as client:
        body = client.get("/readyz").json()
    assert "database" in body["not_ready"]
    assert "run the migrations" in body["checks"]["database"]["detail"]


def test_readyz_is_not_ready_while_no_worker_lives(client: TestClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["not_ready"] == ["workers"]
    assert body["checks"]["database"]["ok"] and body["checks"]["broker"]["ok"]
    assert "no live worker for queue control, gpu or cpu" in body["checks"]["workers"]["detail"]


def test_readyz_turns_ready_when_real_workers_answer(
    client: TestClient, live_workers: list, ready_env: Callable[[str], None]
) -> None:
    wait_until(lambda: client.get("/readyz").status_code == 200, 90, "readyz turning ready")
    workers = client.get("/readyz").json()["checks"]["workers"]["detail"]
    assert "control: control@" in workers and "cpu: cpu@" in workers
    ready_env("control,gpu")  # a cluster that needs GPU workers is not ready with a CPU one
    body = client.get("/readyz").json()
    assert body["not_ready"] == ["workers"]
    assert "no live worker for queue gpu" in body["checks"]["workers"]["detail"]


def test_readyz_says_when_queued_work_waits_for_a_gpu_worker(settings: Settings,
                                                             client: TestClient) -> None:
    assert client.get("/readyz").json()["checks"]["capacity"]["ok"]
    with wired_sessions(settings.db_url)() as db:
        user = users.add_user(db, "waiting-student", "student", None)
        db.commit()
        sub = Submission(user_id=user.id, language="cuda-program", suite="hw4", status="queued",
                         attempt=1, compile_log="", error="")
        db.add(sub)
        db.commit()
        try:
            body = client.get("/readyz").json()
        finally:
            db.delete(sub)
            db.delete(user)
            db.commit()
    assert "capacity" in body["not_ready"]
    assert body["checks"]["capacity"]["detail"].startswith(
        "1 cuda-program submission(s) wait: no GPU worker is connected")
    assert body["languages"]["cuda-program"] == []


def container_healthcheck(settings: Settings) -> subprocess.CompletedProcess:
    env = {**worker_env(settings), "FLASHJUDGE_BROKER_URL": settings.broker_url or "",
           "FLASHJUDGE_HEALTHCHECK_TIMEOUT_S": "1"}
    return subprocess.run([sys.executable, str(REPO / "docker" / "healthcheck.py"), "worker"],
                          env=env, capture_output=True, text=True, timeout=60)


def test_the_worker_container_healthcheck_sees_its_own_workers(
    settings: Settings, client: TestClient, live_workers: list
) -> None:
    if not settings.broker_url:
        assert container_healthcheck(settings).returncode == 1  # containers always use Redis
        return
    wait_until(lambda: container_healthcheck(settings).returncode == 0, 90, "a worker answering")
    for proc in live_workers:
        proc.terminate()
        proc.wait(timeout=30)
    check = container_healthcheck(settings)
    assert check.returncode == 1
    assert "answered: none" in check.stdout


def test_readyz_names_a_worker_that_is_starting_until_it_takes_jobs(
    settings: Settings, client: TestClient, worker_env_vars: WorkerEnv
) -> None:
    """What `flashjudge worker` announces before its Celery process is up reaches /readyz
    through the real control worker, and the real CPU worker's first heartbeat replaces it."""
    from worker.celery_adapter.starting import Coming, announce

    env = worker_env(settings)
    worker_env_vars({key: env.get(key) for key in ("FLASHJUDGE_DATA_DIR", "FLASHJUDGE_BROKER_URL")})
    flashjudge = str(Path(sys.executable).with_name("flashjudge"))
    procs = [subprocess.Popen([flashjudge, "worker", "--control"], env=env,
                              cwd=settings.data_dir, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        assert announce([Coming("cpu", "cpu", "cpu")], "starting (preflight)")
        wait_until(lambda: "starting (preflight)" in workers_detail(client), 90,
                   "the starting worker named")
        body = client.get("/readyz").json()
        assert "workers" in body["not_ready"]
        assert "worker cpu@" in body["checks"]["workers"]["detail"]
        assert "on cpu starting (preflight)" in body["checks"]["workers"]["detail"]
        assert body["languages"]["c-program"] == []  # a starting worker judges nothing yet
        procs.append(subprocess.Popen([flashjudge, "worker", "--gpus", "none"], env=env,
                                      cwd=settings.data_dir, start_new_session=True,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_until(lambda: client.get("/readyz").status_code == 200, 90, "readyz turning ready")
        assert client.get("/readyz").json()["languages"]["c-program"]  # its own heartbeat
    finally:
        stop_all(procs)


def workers_detail(client: TestClient) -> str:
    return str(client.get("/readyz").json()["checks"]["workers"]["detail"])


def stop_all(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
