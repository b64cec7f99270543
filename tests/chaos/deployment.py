"""A real deployment made of this test's own processes, and the counts read from its logs.

- Redis: a redis-server of its own on a free port (append-only, fsync on every write, as a
  production Redis that must not lose queued work), which the chaos test SIGKILLs and restarts;
  never the machine's Redis on 6379.
- PostgreSQL: a fresh schema on the machine's server, migrated with Alembic.
- the control worker and one CPU judge worker: separate Celery processes
  (tests/app/utils/processes.py), SIGKILLed and restarted as a whole process group;
- the app: in this process (FastAPI's TestClient runs its lifespan, hence the sweeper thread).

Counting comes from the JSON log lines: a judge worker logs "judging attempt N" once per
judging it starts (tagged with the submission id), the control worker "recorded verdict" once
per verdict it stores.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from app.core.config import Settings
from tests.app.utils.processes import kill_group, start_worker, stop, wait_for

REDIS_SERVER = shutil.which("redis-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class RedisServer:
    """A redis-server of this test's own, restartable on the same port and data."""

    folder: Path  # its append-only file lives here
    port: int = field(default_factory=free_port)  # where it listens
    proc: subprocess.Popen | None = None  # the running server

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        argv = [str(REDIS_SERVER), "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.folder), "--appendonly", "yes", "--appendfsync", "always",
                "--save", "", "--protected-mode", "no"]
        with (self.folder / "redis.log").open("ab") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        wait_for(self.answers, 30, f"redis-server on port {self.port}")

    def answers(self) -> bool:
        with contextlib.suppress(OSError), socket.create_connection(
                ("127.0.0.1", self.port), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
        return False

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final save (the append-only file has every write)."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def lose_data(self) -> None:
        """SIGKILL, delete its files, start again: a Redis restarted without persistence (or
        with its disk lost) comes back empty, its queued messages gone."""
        self.kill()
        for path in self.folder.iterdir():
            if path.name != "redis.log":
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        self.start()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


@dataclass
class Deployment:
    """The control worker and the judge worker of one deployment, with their logs."""

    settings: Settings  # what every process is configured with
    logs: Path  # one log file per role, appended across restarts
    control: subprocess.Popen | None = None  # the running control worker
    judge: subprocess.Popen | None = None  # the running judge worker

    def start(self, role: str) -> None:
        proc = start_worker(self.settings, role, self.logs / f"{role}.log")
        setattr(self, role, proc)

    def kill(self, role: str) -> None:
        """SIGKILL the worker and its pool children (mid-judging, mid-recording)."""
        proc = getattr(self, role)
        if proc is not None:
            kill_group(proc)

    def stop_all(self) -> None:
        for proc in (self.judge, self.control):
            if proc is not None:
                stop(proc)

    def judge_runs(self) -> Counter[tuple[str, int]]:
        """How many judgings started per (submission id, attempt)."""
        runs: Counter[tuple[str, int]] = Counter()
        for line in json_lines(self.logs / "judge.log"):
            message = str(line.get("msg", ""))
            if message.startswith("judging attempt "):
                attempt = int(message.split()[2].rstrip(":"))
                runs[str(line.get("submission_id")), attempt] += 1
        return runs

    def dropped(self) -> int:
        """Deliveries a worker refused (stale or duplicate): the re-sends that judged nothing."""
        return sum(str(line.get("msg", "")).startswith("not judging attempt")
                   for line in json_lines(self.logs / "judge.log"))

    def verdicts_recorded(self) -> Counter[str]:
        """How many times a verdict was stored per submission id."""
        return Counter(str(line.get("submission_id"))
                       for line in json_lines(self.logs / "control.log")
                       if str(line.get("msg", "")).startswith("recorded verdict"))


def json_lines(path: Path) -> list[dict]:
    """The JSON log lines of a file (a line cut by a SIGKILL, or a banner, is skipped)."""
    if not path.exists():
        return []
    found = []
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):
                found.append(json.loads(line))
    return found
