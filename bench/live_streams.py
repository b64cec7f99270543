"""What open live streams cost the database: N submission event streams against a running API on
PostgreSQL, while results are recorded in the database as the control worker records them.

Creates a student, a token and `--submissions` running submissions, opens `--streams` event
streams spread over them, waits until every stream has its first state, then measures two
phases: idle (streams open, nothing recorded) and recording (`--rounds` rounds, every
`--interval` s, of one test result for `--per-round` submissions). Prints per phase: streams
open, the API's DB connections (pg_stat_activity by application_name: all, and busy = active or
in a transaction; the most seen), the poller's statements/s (its own counter on /metrics),
transactions/s in the database (pg_stat_database: the API's and the recording's, and anything
else using that database), and the delivery latency of recorded results to every watching
stream (from the start of the recording transaction to the event's arrival), p50/p99.

    .venv/bin/python bench/live_streams.py            # starts uvicorn on a fresh database
    .venv/bin/python bench/live_streams.py --server http://127.0.0.1:8000 \\
        --database-url 'postgresql+psycopg://...&application_name=flashjudge-api'
With --server, the API must use the same database and name its connections
(application_name=..., --app-name) for the connection count.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import secrets
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory

import httpx
import psycopg
from rich.console import Console
from rich.table import Table
from sqlalchemy import make_url

from app.accounts import users
from app.db.migrate import upgrade
from app.db.models import Submission
from app.submissions import recording
from app.wiring import wired_sessions

PG_SERVER = "postgresql://postgres@127.0.0.1:5432/test"
PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/{database}"
REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    """The API measured and its database."""

    server: str  # base URL
    db_url: str  # SQLAlchemy URL of its database (without application_name)
    app_name: str  # the API's application_name on PostgreSQL

    @property
    def database(self) -> str:
        return str(make_url(self.db_url).database)


@dataclass
class Phase:
    """What one phase measured."""

    name: str
    seconds: float = 0.0
    connections: int = 0  # the API's connections, the most seen
    busy: int = 0  # of those, active or in a transaction, the most seen
    poller_queries: float = 0.0  # statements the poller sent, per second
    polls: int = 0  # reads of the change feed
    snapshots: int = 0  # submission states the poller loaded
    transactions: float = 0.0  # per second, of the whole database
    latencies: list[float] = field(default_factory=list)


@dataclass
class Watch:
    """The shared state of the streams and the recorder."""

    sent: dict[tuple[int, str], float] = field(default_factory=dict)  # (sub, test) -> t0
    latencies: list[float] = field(default_factory=list)
    first: int = 0  # streams that got their first state


def pg(query: str, *args: object) -> list[tuple]:
    with psycopg.connect(PG_SERVER, autocommit=True) as conn:
        cursor = conn.execute(query, args)
        return cursor.fetchall() if cursor.description else []


def api_connections(app_name: str) -> tuple[int, int]:
    rows = pg("SELECT state FROM pg_stat_activity WHERE application_name = %s", app_name)
    return len(rows), sum(1 for (state,) in rows if state != "idle")


def transactions(database: str) -> int:
    """Transactions in `database` so far (a read-only session ends in a rollback)."""
    return pg("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
              database)[0][0]


def poller_counter(server: str, name: str) -> float:
    """One of the poller's counters on /metrics (e.g. "queries", "snapshots")."""
    text = httpx.get(f"{server}/metrics", timeout=30).text
    line = next(x for x in text.splitlines() if x.startswith(f"flashjudge_live_{name}_total"))
    return float(line.split()[1])


def prepare(db_url: str, submissions: int) -> tuple[str, list[int]]:
    """A student's token and `submissions` running submissions."""
    with wired_sessions(db_url)() as db:
        user = users.add_user(db, f"bench{uuid.uuid4().hex[:6]}", "student",
                              "bench passphrase 123")
        token = users.issue_token(db, user, "bench", None)
        subs = [Submission(user_id=user.id, language="c-program", suite="hw4-mini",
                           status="running", attempt=1, compile_log="", error="")
                for _ in range(submissions)]
        db.add_all(subs)
        db.commit()
        return token, [s.id for s in subs]


async def watch(client: httpx.AsyncClient, sub_id: int, state: Watch) -> None:
    """One stream: note when each recorded test first shows up."""
    seen: set[str] = set()
    async with client.stream("GET", f"/api/submissions/{sub_id}/events") as response:
        response.raise_for_status()
        first = True
        async for line in response.aiter_lines():
            if not line.startswith("data: "):
                continue
            now = time.perf_counter()
            state.first += first
            first = False
            for test in json.loads(line[6:])["tests"]:
                key = (sub_id, test["id"])
                if test["id"] not in seen and key in state.sent:
                    seen.add(test["id"])
                    state.latencies.append(now - state.sent[key])


def record_round(db_url: str, subs: list[int], test_id: str, state: Watch) -> None:
    """One test result for each of `subs`, each in its own transaction (as control does)."""
    with wired_sessions(db_url)() as db:
        for sub_id in subs:
            state.sent[(sub_id, test_id)] = time.perf_counter()
            test = {"id": test_id, "verdict": "AC", "seconds": 0.01, "time_limit_s": 10}
            recording.record_progress(db, sub_id, 1, {"type": "test-done", "test": test})


async def measure(phase: Phase, target: Target, seconds: float, work) -> Phase:  # noqa: ANN001
    """Run `work` (or wait `seconds`) while sampling the API's connections."""
    server = target.server
    queries, snapshots = poller_counter(server, "queries"), poller_counter(server, "snapshots")
    polls, xacts = poller_counter(server, "polls"), transactions(target.database)
    start = time.perf_counter()
    task = asyncio.ensure_future(work() if work else asyncio.sleep(seconds))
    while not task.done():
        total, busy = await asyncio.to_thread(api_connections, target.app_name)
        phase.connections, phase.busy = max(phase.connections, total), max(phase.busy, busy)
        await asyncio.sleep(0.2)
    await task
    phase.seconds = time.perf_counter() - start
    phase.poller_queries = (poller_counter(server, "queries") - queries) / phase.seconds
    phase.snapshots = int(poller_counter(server, "snapshots") - snapshots)
    phase.polls = int(poller_counter(server, "polls") - polls)
    phase.transactions = (transactions(target.database) - xacts) / phase.seconds
    return phase


async def run(args: argparse.Namespace, target: Target) -> tuple[list[Phase], int]:
    server, db_url = target.server, target.db_url
    token, subs = prepare(db_url, args.submissions)
    state = Watch()
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(base_url=server, limits=limits, timeout=None,
                                 headers={"Authorization": f"Bearer {token}"}) as client:
        # the token's first use writes last_used_at on a second connection while the request's
        # is held: hundreds of first uses at once would wait on the pool (app/accounts/tokens.py)
        (await client.get("/api/submissions/mine")).raise_for_status()
        streams = [asyncio.ensure_future(watch(client, subs[i % len(subs)], state))
                   for i in range(args.streams)]
        give_up = time.monotonic() + args.first_within
        while state.first < args.streams:
            if any(s.done() for s in streams):
                raise SystemExit(f"a stream ended early: {next(s for s in streams if s.done())}")
            if time.monotonic() > give_up:
                raise SystemExit(f"{state.first} of {args.streams} streams got their first state "
                                 f"within {args.first_within:g} s; API connections (busy): "
                                 f"{api_connections(target.app_name)}")
            await asyncio.sleep(0.1)
        idle = await measure(Phase("idle"), target, args.idle, None)

        async def recording_rounds() -> None:
            for n in range(args.rounds):
                chosen = [subs[(n * args.per_round + i) % len(subs)] for i in range(args.per_round)]
                await asyncio.to_thread(record_round, db_url, chosen, f"t{n:03d}", state)
                await asyncio.sleep(args.interval)
            await asyncio.sleep(2.0)  # the last round's events arrive

        busy = await measure(Phase("recording"), target, 0, recording_rounds)
        busy.latencies = list(state.latencies)
        for stream in streams:
            stream.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
    return [idle, busy], len(streams)


def percentile(values: list[float], q: int) -> str:
    if not values:
        return "-"
    return f"{statistics.quantiles(values, n=100, method='inclusive')[q - 1] * 1000:.0f} ms"


def report(phases: list[Phase], streams: int, args: argparse.Namespace) -> None:
    table = Table(title=f"{streams} live streams over {args.submissions} submissions, PostgreSQL "
                        f"({os.cpu_count()} CPUs, {platform.node()}, "
                        f"{time.strftime('%Y-%m-%d')}, poll {args.poll_s} s)")
    for column in ("phase", "seconds", "streams open", "API DB connections (busy)", "polls",
                   "poller queries/s", "states loaded", "DB transactions/s (all)", "events",
                   "latency p50", "latency p99"):
        table.add_column(column, justify="right")
    for p in phases:
        table.add_row(p.name, f"{p.seconds:.1f}", str(streams), f"{p.connections} ({p.busy})",
                      str(p.polls), f"{p.poller_queries:.1f}", str(p.snapshots),
                      f"{p.transactions:.1f}", str(len(p.latencies)),
                      percentile(p.latencies, 50), percentile(p.latencies, 99))
    Console(width=160).print(table)


@contextlib.contextmanager
def spawned(poll_s: float) -> Iterator[Target]:
    """uvicorn with the app on a fresh database of its own (its transactions are the API's and
    the recording's)."""
    database, app_name = f"fj_bench_{uuid.uuid4().hex[:8]}", "flashjudge-api-bench"
    pg(f"CREATE DATABASE {database}")
    db_url = PG_URL.format(database=database)
    upgrade(db_url)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with TemporaryDirectory() as data:
        env = {**os.environ, "FLASHJUDGE_DATABASE_URL": f"{db_url}?application_name={app_name}",
               "FLASHJUDGE_DATA_DIR": data, "FLASHJUDGE_SECRET_KEY": secrets.token_hex(16),
               "FLASHJUDGE_SWEEP_INTERVAL_S": "0", "FLASHJUDGE_MIGRATE_ON_START": "false",
               "FLASHJUDGE_SUITE": "hw4-mini", "FLASHJUDGE_LIVE_POLL_S": str(poll_s)}
        proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:create_app",
                                 "--factory", "--port", str(port), "--log-level", "warning"],
                                env=env, cwd=REPO)
        server = f"http://127.0.0.1:{port}"
        try:
            wait_up(server, proc)
            yield Target(server, db_url, app_name)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            pg(f"DROP DATABASE {database} WITH (FORCE)")


def wait_up(server: str, proc: subprocess.Popen) -> None:
    end = time.monotonic() + 60
    while time.monotonic() < end and proc.poll() is None:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{server}/healthz", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise SystemExit("the API did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=500)
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--per-round", type=int, default=10)
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of the idle phase")
    parser.add_argument("--first-within", type=float, default=120.0,
                        help="seconds for every stream to get its first state")
    parser.add_argument("--poll-s", type=float, default=0.25, help="a spawned API's poll")
    parser.add_argument("--server", help="a running API (else one is started)")
    parser.add_argument("--database-url", help="the running API's database (SQLAlchemy URL)")
    parser.add_argument("--app-name", default="flashjudge-api",
                        help="the running API's application_name on PostgreSQL")
    args = parser.parse_args()
    if args.server:
        if not args.database_url:
            parser.error("--server needs --database-url")
        db_url = str(make_url(args.database_url).difference_update_query(["application_name"]))
        phases, streams = asyncio.run(run(args, Target(args.server, db_url, args.app_name)))
    else:
        with spawned(args.poll_s) as target:
            phases, streams = asyncio.run(run(args, target))
    report(phases, streams, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
