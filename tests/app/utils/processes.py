"""Real worker processes for the integration tests: started, waited on with deadlines, killed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from app.core.config import Settings

REPO = Path(__file__).resolve().parents[3]


def settings_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment a `flashjudge serve` child would get for these settings."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("FLASHJUDGE_DATABASE_URL", "FLASHJUDGE_BROKER_URL")}
    env.update({"FLASHJUDGE_DATA_DIR": str(settings.data_dir), "FLASHJUDGE_SUITE": settings.suite,
                "FLASHJUDGE_HEARTBEAT_S": "0.5", "FLASHJUDGE_ENVIRONMENT": "test",
                "FLASHJUDGE_SECRET_KEY": "test-secret-not-for-production",
                "FLASHJUDGE_JUDGE_TESTS": settings.judge_tests, "PYTHONPATH": str(REPO), **extra})
    if settings.broker_url:
        env["FLASHJUDGE_BROKER_URL"] = settings.broker_url
    return env


def start_worker(settings: Settings, kind: str, log: Path) -> subprocess.Popen:
    """A judge worker (queue cpu, prefork) or the control worker (with the database URL)."""
    if kind == "control":
        app, queues, pool = "app.control.entry", "control", "solo"
        env = settings_env(settings, FLASHJUDGE_DATABASE_URL=settings.db_url)
    else:
        app, queues, pool = "worker.celery_adapter.entry", "cpu", "prefork"
        env = settings_env(settings, FLASHJUDGE_QUEUES="cpu")
    argv = [sys.executable, "-m", "celery", "-A", app, "worker", "-Q", queues, "-c", "1",
            "-P", pool, "-n", f"{kind}-{os.getpid()}-{time.monotonic_ns()}@test",
            "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with log.open("ab") as out:
        return subprocess.Popen(argv, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Signal the worker and its pool children (its own process group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    proc.wait(timeout=30)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            kill_group(proc)


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, command name) of every process below `pid`, read from /proc."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # the process ended while we looked
        name_end = text.rindex(")")
        child = int(text[:text.index(" ")])
        names[child] = text[text.index("(") + 1:name_end]
        parents[child] = int(text[name_end + 2:].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent:
                found.append((child, names[child]))
                frontier.append(child)
    return found


T = TypeVar("T")


def wait_for(condition: Callable[[], T | None], deadline_s: float, what: str,
             tick: Callable[[], None] | None = None) -> T:
    """Poll `condition` until it returns something truthy, or fail saying what never happened."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        if tick is not None:
            tick()
        time.sleep(0.25)
    raise AssertionError(f"timed out after {deadline_s:.0f} s waiting for {what}")
