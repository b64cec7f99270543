"""Operations endpoints: liveness, readiness and Prometheus metrics.

- `/healthz` says the process answers; it touches nothing, so a slow database never gets a healthy
  API container restarted.
- `/readyz` says the service can do its job now: the database answers and is migrated, the broker
  answers, every queue in use has a live worker (a Celery broadcast, short timeout), and no
  queued submission waits for a language no live worker judges (from the workers' heartbeats:
  "2 cuda-program submission(s) wait: no GPU worker is connected"), and no queued message the
  broker lost waits to be sent again ("broker lost 42 queued message(s) at 21:14 UTC; re-sent"
  stays in `messages` for 10 minutes after, ready). 503 with a JSON body naming
  what is not ready, so a TA reading it knows what to fix; `languages` lists who judges what.
- `/metrics` is the Prometheus text format, read from the database and broker at scrape time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from alembic.script import ScriptDirectory
from celery import Celery
from fastapi import APIRouter, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import inspect, text

from app.core.config import Settings
from app.db.migrate import alembic_config
from app.db.session import get_engine, session_factory
from app.live.metrics import LiveCollector
from app.live.runtime import LiveDep
from app.metrics import FlashjudgeCollector, render
from app.schemas.health import Alive, ReadyOut
from app.submissions import capacity
from app.submissions.dispatch import control_app
from app.upkeep.broker_watch import loss_notice
from app.web.deps import SettingsDep
from flashjudge.contract import ALL_QUEUES, JUDGE_QUEUES, Queue

router = APIRouter(tags=["operations"])


@dataclass(frozen=True)
class Check:
    """One readiness condition."""

    ok: bool  # is this part ready?
    detail: str  # what was found, or what is wrong and how to fix it


def check_database(settings: Settings) -> Check:
    """The database answers and its schema is at the migrations' head."""
    url = settings.db_url
    with get_engine(url).connect() as conn:
        conn.execute(text("SELECT 1"))
        if not inspect(conn).has_table("alembic_version"):
            return Check(False, "reachable but empty: run the migrations")
        current = set(conn.scalars(text("SELECT version_num FROM alembic_version")))
    heads = set(ScriptDirectory.from_config(alembic_config(url)).get_heads())
    if current != heads:
        have = ", ".join(sorted(current)) or "none"
        return Check(False, f"schema at {have}, code expects {', '.join(sorted(heads))}: "
                            "run the migrations")
    return Check(True, "reachable, schema at head")


def check_broker(celery: Celery, timeout_s: float) -> Check:
    with celery.connection_for_write(connect_timeout=timeout_s) as conn:
        conn.connect()
        return Check(True, f"{conn.transport_cls} reachable")


def live_queues(celery: Celery, timeout_s: float) -> dict[str, list[str]]:
    """queue -> the Celery nodes consuming it, from a broadcast `active_queues` inspect."""
    replies = celery.control.inspect(timeout=timeout_s).active_queues() or {}
    consumers: dict[str, list[str]] = {}
    for node, queues in sorted(replies.items()):
        for queue in queues:
            consumers.setdefault(queue["name"], []).append(node)
    return consumers


def check_workers(celery: Celery, wanted: str, timeout_s: float,
                  starting: Callable[[], list[tuple[str, str, str]]] = list) -> Check:
    """Each wanted queue (or control + one judge queue, by default) has a live worker; where
    one is missing, a worker of that queue still starting (`starting`: hostname, queues, state
    from the heartbeats) is named with what it is doing."""
    consumers = live_queues(celery, timeout_s)
    seen = "; ".join(f"{q}: {', '.join(nodes)}" for q, nodes in sorted(consumers.items()))
    if wanted.strip():
        missing = [q.strip() for q in wanted.split(",") if q.strip() and q.strip() not in consumers]
    else:
        missing = [] if Queue.CONTROL in consumers else [str(Queue.CONTROL)]
        if not any(q in consumers for q in JUDGE_QUEUES):
            missing.append(" or ".join(map(str, JUDGE_QUEUES)))
    if missing:
        doing = starting_detail(missing, starting())
        return Check(False, f"no live worker for queue {', '.join(missing)} "
                            f"(live: {seen or 'none'}){doing}")
    return Check(True, seen)


def starting_detail(missing: list[str], starting: list[tuple[str, str, str]]) -> str:
    """"; worker gpu0@node1 on gpu starting (preflight)" for each starting worker of a missing
    queue ("gpu or cpu" counts for both)."""
    wanted = {q.strip() for m in missing for q in m.split(" or ")}
    said = [f"worker {host} on {queue} {state}" for host, queues, state in starting
            for queue in [q.strip() for q in queues.split(",")] if queue in wanted]
    return "; " + "; ".join(said) if said else ""


@dataclass(frozen=True)
class CapacityCheck(Check):
    """The capacity condition, with the languages the live workers judge."""

    languages: dict[str, list[str]] = field(default_factory=dict)  # language -> live workers


def check_capacity(settings: Settings) -> CapacityCheck:
    """No queued submission waits for a language that no live worker judges."""
    with session_factory(settings.db_url)() as db:
        can = capacity.current(db, settings)
        stranded = capacity.stranded(db, can)
    languages = {s.name: list(s.workers) for s in can.languages}
    now = ", ".join(can.available) or "none"
    if not stranded:
        return CapacityCheck(True, f"languages that can be judged now: {now}", languages)
    waiting = "; ".join(f"{n} {lang} submission(s) wait: {can.get(lang).missing} is connected"
                        for lang, n in sorted(stranded.items()))
    return CapacityCheck(False, f"{waiting} (start one, or a TA cancels them on /admin); "
                                f"languages that can be judged now: {now}", languages)


def starting_now(settings: Settings) -> list[tuple[str, str, str]]:
    """The workers whose supervisor said they are starting (none when the database cannot
    tell: then the check says only what the broadcast found)."""
    try:
        with session_factory(settings.db_url)() as db:
            return capacity.starting_workers(db, settings)
    except Exception:  # noqa: BLE001 - the database check says what is wrong with it
        return []


def check_messages(settings: Settings) -> Check:
    """No queued work whose message the broker lost waits to be sent again; a loss re-sent in
    the last minutes is said, ready (app/upkeep/broker_watch.py)."""
    with session_factory(settings.db_url)() as db:
        notice = loss_notice(db)
    if notice is None:
        return Check(True, "the broker holds every queued message we know of")
    return Check(notice.resent, notice.text())


async def run_check(check: Callable[[], Check], timeout_s: float) -> Check:
    """Run a blocking check in a thread; a hang or an exception is a failed check, not a 500."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(check), timeout_s)
    except TimeoutError:
        return Check(False, f"no answer within {timeout_s:g} s")
    except Exception as exc:  # noqa: BLE001  whatever broke is what the operator must read
        return Check(False, f"{type(exc).__name__}: {exc}")


@router.get("/healthz", response_model=Alive)
async def healthz() -> dict[str, str]:
    """Liveness: the process answers (no dependency is touched)."""
    return {"status": "alive"}


@router.get("/readyz", response_model=ReadyOut,
            responses={503: {"model": ReadyOut, "description": "not ready; the body says why"}})
async def readyz(settings: SettingsDep) -> JSONResponse:
    """Readiness: database (migrated), broker, a live worker for each queue in use, no queued
    submission waiting for a language no live worker judges, and none whose message the broker
    lost waiting to be sent again."""
    celery = control_app(settings)
    timeout = settings.ready_timeout_s
    limit = timeout + 2  # the inspect below waits `timeout` by design; 2 s more for the rest
    database, broker, workers, capacity_, messages = await asyncio.gather(
        run_check(lambda: check_database(settings), limit),
        run_check(lambda: check_broker(celery, timeout), limit),
        run_check(lambda: check_workers(celery, settings.ready_queues, timeout,
                                        lambda: starting_now(settings)), limit),
        run_check(lambda: check_capacity(settings), limit),
        run_check(lambda: check_messages(settings), limit),
    )
    if not database.ok:  # its tables are where these are read: one failure, said once
        capacity_ = messages = Check(True, "not checked: the database is not ready")
    checks = {"database": database, "broker": broker, "workers": workers,
              "capacity": capacity_, "messages": messages}
    not_ready = [name for name, check in checks.items() if not check.ok]
    body = {
        "status": "not ready" if not_ready else "ready",
        "not_ready": not_ready,
        "checks": {name: {"ok": check.ok, "detail": check.detail}
                   for name, check in checks.items()},
        "languages": getattr(capacity_, "languages", {}),
    }
    return JSONResponse(body, status_code=503 if not_ready else 200)


def scrape(settings: Settings, live: LiveCollector) -> bytes:
    """The database's and broker's metrics (read now) and this process's live numbers."""
    celery = control_app(settings)
    queues = [str(q) for q in ALL_QUEUES]
    collector = FlashjudgeCollector(
        session_factory(settings.db_url), celery, queues, settings.ready_timeout_s
    )
    return render(collector, live)


@router.get("/metrics", response_class=Response)
async def metrics(settings: SettingsDep, live: LiveDep) -> Response:
    """Prometheus metrics: submissions by verdict, queue lengths, judge times, GPU busy time;
    this process's live streams and its poller's counters (app/live/metrics.py)."""
    numbers = LiveCollector(live.hub.count(), replace(live.poller.stats))  # read on the loop
    return Response(await run_in_threadpool(scrape, settings, numbers),
                    media_type=CONTENT_TYPE_LATEST)
