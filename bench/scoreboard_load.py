"""GET /api/scoreboard under load while results are being recorded, on a real deployment.

    PYTHONPATH=. python bench/scoreboard_load.py [--students 300] [--rate 200] [--seconds 30]
        [--results-per-s 1.5] [--clients 100] [--streams 0] [--path /api/scoreboard]
        [--pg postgresql://postgres@127.0.0.1:5432/test] [--repo PATH]

Starts, all on loopback: a redis-server of its own (the broker), a throwaway PostgreSQL schema
(migrated; dropped at the end), uvicorn serving the app (one process, as the image runs it) and
the real control worker (Celery, app/control/entry.py). Seeds `--students` students with two
judged submissions each on the hw4 suite (30 tests) and a queued one each. A "fleet" thread then
sends record_result messages for the queued submissions through the control queue at a steady
`--results-per-s`, as GPU workers would, while the load generator (bench/loadgen.py: open loop,
latency from each request's due time) asks for the board at `--rate` with `--clients` keep-alive
connections, each a different student's browser session (cookie), accepting gzip like browsers.

Two measured runs: clients that send back the ETag they got (If-None-Match, as the scoreboard
page's refetch does) and clients that do not. With `--streams N`, N event streams
(GET /api/scoreboard/events) are held open alongside, each a student's session, by a process of
their own (reading 500 streams' events must not stall the load generator's measurements); they
count events but do not refetch.

`--repo PATH` serves and records with another checkout's code (e.g. main's, for a before/after on
the same data); the database is still migrated by this checkout.

Everything shares this machine's cores (load generator, uvicorn, control worker, PostgreSQL,
Redis): say so next to any figure. Prints one table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import queue
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from base64 import b64encode
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import itsdangerous
import psycopg
from loadgen import Client, Outcome, close, close_streams, open_streams, run_at_rate
from rich.console import Console
from rich.table import Table
from sqlalchemy import func, select

from app.accounts import sessions
from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.models import JudgedTest, Submission, User
from app.db.session import get_engine
from app.submissions.dispatch import control_app
from app.wiring import wired_sessions
from flashjudge.contract import Queue, Task

REPO = Path(__file__).resolve().parents[1]
SECRET = "bench-secret-not-for-production"
GPU = "NVIDIA H100 80GB HBM3"
TESTS = [f"t{i:02d}" for i in range(1, 31)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check, seconds: float, what: str) -> None:  # noqa: ANN001
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.2)
    raise SystemExit(f"timed out waiting for {what}")


def result(rng: random.Random) -> dict:
    """A record_result body like a GPU worker's: 30 tests, most passing, times in seconds."""
    passed = rng.randint(22, 30)
    tests = [{"id": t, "verdict": "AC" if i < passed else "WA",
              "seconds": rng.uniform(0.01, 2.0), "time_limit_s": 10.0,
              "max_error": 1e-6} for i, t in enumerate(TESTS)]
    return {"compile": {"ok": True, "log": ""}, "score": 2 * passed, "passed": passed,
            "tests": tests, "system_error": None, "worker": {"hostname": "gpu0@node", "gpu": GPU}}


def seed(settings: Settings, students: int, rng: random.Random) -> tuple[list[str], list[int]]:
    """Students with two judged submissions each and one queued; their session cookies."""
    signer = itsdangerous.TimestampSigner(SECRET)
    cookies, queued = [], []
    with wired_sessions(settings.db_url)() as db:
        for i in range(students):
            user = User(username=f"s{i:03d}", display_name=f"Student {i}", role="student")
            db.add(user)
            db.flush()
            for _ in range(2):
                body = result(rng)
                sub = Submission(user_id=user.id, language="cuda-program", suite="hw4",
                                 status="done", verdict="WA", passed=body["passed"],
                                 score=body["score"], attempt=1, compile_log="", error="",
                                 gpu_model=GPU,
                                 total_time=round(sum(t["seconds"] for t in body["tests"]), 6))
                sub.tests = [JudgedTest(attempt=1, test_id=t["id"], verdict=t["verdict"],
                                        seconds=t["seconds"]) for t in body["tests"]]
                db.add(sub)
            waiting = Submission(user_id=user.id, language="cuda-program", suite="hw4",
                                 status="queued", attempt=1, compile_log="", error="")
            db.add(waiting)
            db.flush()
            queued.append(waiting.id)
            sid = sessions.start(db, user, 24 * 3600)
            cookie = b64encode(json.dumps({"sid": sid, "csrf": "bench"}).encode())
            cookies.append("fj_session=" + signer.sign(cookie).decode())
        db.commit()
    return cookies, queued


@dataclass
class Fleet:
    """Sends record_result messages through the control queue at a steady rate."""

    settings: Settings
    queued: list[int]
    per_s: float
    sent: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        app, rng = control_app(self.settings), random.Random(3)
        next_at = time.monotonic()
        while not self.stop.is_set() and self.queued:
            app.send_task(str(Task.RECORD_RESULT), queue=str(Queue.CONTROL),
                          args=[self.queued.pop(), 1, result(rng), None])
            self.sent += 1
            next_at += 1 / self.per_s
            self.stop.wait(max(0.0, next_at - time.monotonic()))


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


@dataclass
class Deployment:
    """The processes and the database of one benchmark."""

    settings: Settings
    url: str  # the API's base URL
    server: subprocess.Popen
    control: subprocess.Popen
    folder: Path

    def done_count(self) -> int:
        with wired_sessions(self.settings.db_url)() as db:
            return db.scalar(select(func.count()).select_from(Submission).where(
                Submission.status == "done")) or 0


def schema(pg: str) -> tuple[str, str]:
    name = f"fj_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    base = pg.replace("postgresql://", "postgresql+psycopg://", 1)
    return name, f"{base}?options=-csearch_path%3D{name}"


def start(argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen:
    with log.open("ab") as out:
        return subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def stop(proc: subprocess.Popen, profiler: bool = False) -> None:
    """End a process and its group; a profiler is asked first (SIGINT: it writes its file)."""
    if profiler and proc.poll() is None:
        os.kill(proc.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=60)
        with contextlib.suppress(ProcessLookupError):  # the server it sampled, left running
            os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)


def control_module(code: Path) -> str:
    """The control worker's Celery module in checkout `code` (older ones kept it at the top of
    app/, so a before/after with `--repo` records results on both sides)."""
    return "app.control.entry" if (code / "app" / "control" / "entry.py").exists() \
        else "app.control_entry"


def profiled(argv: list[str], out: str | None) -> list[str]:
    """`argv` under py-spy (every thread sampled, idle ones left out) writing collapsed stacks to
    `out`; as it is without `--profile`. bench/profile_summary.py reads the file."""
    if not out:
        return argv
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    return [spy, "record", "--format", "raw", "--rate", "200", "--threads", "--nonblocking",
            "--output",
            str(Path(out).resolve()), "--", *argv]


@contextlib.contextmanager
def deployment(args: argparse.Namespace, extra_env: dict[str, str] | None = None
               ) -> Iterator[tuple[Deployment, list[str], list[int]]]:
    folder = Path(tempfile.mkdtemp(prefix="fj-board-"))
    redis_port, port = free_port(), free_port()
    redis = start([shutil.which("redis-server") or "redis-server", "--port", str(redis_port),
                   "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], dict(os.environ),
                  folder, folder / "redis.log")
    name, db_url = schema(args.pg)
    procs = [redis]
    try:
        broker_url = f"redis://127.0.0.1:{redis_port}/0"
        settings = Settings(environment="test", data_dir=folder, suite="hw4", database_url=db_url,
                            broker_url=broker_url, secret_key=SECRET,
                            sweep_interval_s=0, migrate_on_start=False)
        upgrade(db_url)
        cookies, queued = seed(settings, args.students, random.Random(1))
        with psycopg.connect(args.pg, autocommit=True) as conn:  # not autovacuum mid-run
            conn.execute(f"SET search_path TO {name}")
            conn.execute("VACUUM ANALYZE")
        code = Path(args.repo).resolve() if args.repo else REPO
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("FLASHJUDGE_")},
               "FLASHJUDGE_DATABASE_URL": db_url, "FLASHJUDGE_BROKER_URL": broker_url,
               "FLASHJUDGE_SECRET_KEY": SECRET, "FLASHJUDGE_ENVIRONMENT": "test",
               "FLASHJUDGE_SUITE": "hw4", "FLASHJUDGE_DATA_DIR": str(folder),
               "FLASHJUDGE_SWEEP_INTERVAL_S": "0", "FLASHJUDGE_MIGRATE_ON_START": "0",
               "FLASHJUDGE_LOG_LEVEL": "WARNING", "PYTHONPATH": str(code), **(extra_env or {})}
        serve = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app",
                 "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
        server = start(profiled(serve, args.profile), env, code, folder / "uvicorn.log")
        control = start([sys.executable, "-m", "celery", "-A", control_module(code), "worker",
                         "-Q", "control", "-P", "solo", "-c", "1", "-n", "control@bench",
                         "--without-gossip", "--without-mingle", "--without-heartbeat",
                         "--loglevel", "WARNING"], env, code, folder / "control.log")
        procs += [server, control]
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: httpx.get(f"{url}/healthz").status_code == 200, 60, "uvicorn")
        yield Deployment(settings, url, server, control, folder), cookies, queued
    finally:
        for proc in reversed(procs):
            stop(proc, profiler=bool(args.profile) and proc in procs[1:2])
        for log in ("uvicorn.log", "control.log") if args.logs else ():
            print(f"--- {log}\n" + (folder / log).read_text()[-12000:], file=sys.stderr)
        with contextlib.suppress(Exception):
            get_engine(db_url).dispose()
        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Run:
    """One measured run: its conditions and what it measured."""

    label: str
    conditional: bool
    streams: int
    outcome: Outcome
    server_cpu: float  # percent of one core
    control_cpu: float
    client_cpu: float  # this process: the load generator and the fleet thread
    idle: float  # percent of the machine's cores left idle during the run
    results_per_s: float  # results the control worker recorded meanwhile
    streams_open: int = 0
    events: int = 0


def hold_streams(port: int, cookies: list[str], count: int, opened: Any, done: Any) -> None:
    """In a process of its own (its reading must not slow the load generator's loop): hold
    `count` event streams until `done` is set, then report (opened, refused, events)."""
    async def hold() -> None:
        streams = await open_streams("127.0.0.1", port, "/api/scoreboard/events",
                                     [{"Cookie": c} for c in cookies], count)
        while not done.is_set():
            await asyncio.sleep(0.2)
            if streams.opened + streams.refused >= count:
                opened.put_nowait((streams.opened, streams.refused, streams.events))
        await close_streams(streams)

    asyncio.run(hold())


@contextlib.contextmanager
def streams_alongside(port: int, cookies: list[str], count: int) -> Iterator[Callable[[], tuple]]:
    """Event streams held open by a child process; yields a function that reads their counts."""
    if not count:
        yield lambda: (0, 0, 0)
        return
    context = multiprocessing.get_context("spawn")
    counts, done = context.Queue(), context.Event()
    child = context.Process(target=hold_streams, args=(port, cookies, count, counts, done))
    child.start()
    latest = [counts.get(timeout=120)]  # every stream opened (or refused) before measuring

    def read() -> tuple:
        with contextlib.suppress(queue.Empty):
            while True:
                latest[0] = counts.get_nowait()
        return latest[0]

    try:
        yield read
    finally:
        done.set()
        child.join(timeout=30)


async def measure(dep: Deployment, args: argparse.Namespace, cookies: list[str],
                  conditional: bool, label: str, path: str) -> Run:
    port = int(dep.url.rsplit(":", 1)[1])
    gzip = {} if args.no_gzip else {"Accept-Encoding": "gzip"}
    clients = [Client({"Cookie": c, **gzip}) for c in cookies[:args.clients]]
    with streams_alongside(port, cookies, args.streams) as stream_counts:
        return await measured(dep, args, clients, conditional, label, path, stream_counts)


async def measured(dep: Deployment, args: argparse.Namespace, clients: list[Client],
                   conditional: bool, label: str, path: str,
                   stream_counts: Callable[[], tuple]) -> Run:
    port = int(dep.url.rsplit(":", 1)[1])
    before = stream_counts()
    await run_at_rate("127.0.0.1", port, path, clients, args.rate, args.warmup,
                      conditional)  # connections, sessions, caches: not measured
    cpu = (cpu_seconds(dep.server.pid), cpu_seconds(dep.control.pid), time.process_time())
    idle_before = machine_idle()
    done, started = dep.done_count(), time.monotonic()
    outcome = await run_at_rate("127.0.0.1", port, path, clients, args.rate, args.seconds,
                                conditional)
    took = time.monotonic() - started
    recorded = (dep.done_count() - done) / took
    server = 100 * (cpu_seconds(dep.server.pid) - cpu[0]) / took
    control = 100 * (cpu_seconds(dep.control.pid) - cpu[1]) / took
    client = 100 * (time.process_time() - cpu[2]) / took
    idle_after = machine_idle()
    idle = 100 * (idle_after[0] - idle_before[0]) / max(1, idle_after[1] - idle_before[1])
    await close(clients)
    opened, _, events = stream_counts()
    return Run(label, conditional, args.streams, outcome, server, control, client, idle,
               recorded, opened, events - before[2])


def machine_idle() -> tuple[int, int]:
    """(idle, total) jiffies of all cores so far (/proc/stat): how saturated the machine was."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[3] + fields[4], sum(fields[:8])


def ms(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} / {max(values):.1f}" if values else "-"


def table(args: argparse.Namespace, runs: list[Run]) -> None:
    out = Table(title=f"{args.rate:g} req/s for {args.seconds:g} s per run, "
                      f"{args.students} students x 30 tests, {args.clients} clients, results "
                      f"at {args.results_per_s:g}/s, {os.cpu_count()} cores shared by all")
    for column in ("run", "If-None-Match", "streams open (events)", "achieved req/s",
                   "p50 ms", "p99 ms", "200s", "304s", "errors / unanswered", "KB per 200",
                   "builds: n, ms p50/max", "build CPU ms p50/max", "uvicorn CPU %",
                   "control CPU %", "client CPU %", "machine idle %", "results/s recorded"):
        out.add_column(column, justify="right")
    for run in runs:
        o = run.outcome
        ok = o.statuses.get(200, 0)
        out.add_row(run.label, "yes" if run.conditional else "no",
                    f"{run.streams_open}/{run.streams} ({run.events})", f"{o.achieved:.1f}",
                    f"{o.percentile(0.5) * 1000:.1f}", f"{o.percentile(0.99) * 1000:.1f}",
                    str(ok), str(o.statuses.get(304, 0)), f"{o.errors} / {o.unanswered}",
                    f"{o.body_bytes.get(200, 0) / max(ok, 1) / 1024:.0f}",
                    f"{len(o.builds_ms)}, {ms([b[0] for b in o.builds_ms])}",
                    ms([b[1] for b in o.builds_ms]), f"{run.server_cpu:.0f}",
                    f"{run.control_cpu:.0f}", f"{run.client_cpu:.0f}", f"{run.idle:.0f}",
                    f"{run.results_per_s:.2f}")
    Console(width=250).print(out)
    for run in runs if args.slow_ms else []:
        slow = run.outcome.slow_seconds(args.slow_ms / 1000)
        print(f"{run.label} ({'yes' if run.conditional else 'no'}): answers over "
              f"{args.slow_ms:g} ms per second of the run: "
              + (", ".join(f"s{second}: {n}" for second, n in slow) or "none"))


async def main_async(args: argparse.Namespace) -> None:
    with deployment(args) as (dep, cookies, queued):
        fleet = Fleet(dep.settings, queued, args.results_per_s)
        thread = threading.Thread(target=fleet.run, name="fleet", daemon=True)
        thread.start()
        plan = [(f"{args.label}{args.path}", args.path, True),
                (f"{args.label}{args.path}", args.path, False)]
        if args.reference:
            plan.append((f"{args.label}{args.reference} (reference)", args.reference, False))
        try:
            runs = [await measure(dep, args, cookies, conditional, label, path)
                    for label, path, conditional in plan]
        finally:
            fleet.stop.set()
            thread.join(timeout=10)
    table(args, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--rate", type=float, default=200.0, help="requests per second")
    parser.add_argument("--seconds", type=float, default=30.0, help="per measured run")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds before each run")
    parser.add_argument("--results-per-s", type=float, default=1.5)
    parser.add_argument("--clients", type=int, default=100, help="keep-alive connections")
    parser.add_argument("--streams", type=int, default=0,
                        help="event streams held open alongside (GET /api/scoreboard/events)")
    parser.add_argument("--path", default="/api/scoreboard")
    parser.add_argument("--no-gzip", action="store_true", help="clients do not accept gzip")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--repo", default=None, help="serve with this checkout's code")
    parser.add_argument("--label", default="", help="put before each run's name in the table")
    parser.add_argument("--reference", default="",
                        help="also load this path the same way, e.g. /api/auth/me: what any "
                             "logged-in request costs in this deployment")
    parser.add_argument("--profile", default=None, metavar="PATH",
                        help="sample uvicorn with py-spy into PATH (collapsed stacks; "
                             "bench/profile_summary.py summarises them)")
    parser.add_argument("--logs", action="store_true", help="print the servers' last log lines")
    parser.add_argument("--slow-ms", type=float, default=0.0,
                        help="also print, per second of each run, the answers slower than this")
    args = parser.parse_args()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
