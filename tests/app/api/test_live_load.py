"""Many open streams on PostgreSQL, where connections are counted: the API still answers, the
server holds at most a couple of connections busy, and a change committed late with a lower id
than one already read still reaches its stream.

Before the change feed every stream kept a session (and, through SessionDep, a connection idle
in transaction) for its whole life: the 16th stream waited 30 s for the pool, and so did every
other request."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from sqlalchemy import select
from sqlalchemy.pool import QueuePool

from app.core.config import Settings
from app.db.models import Change, Submission
from app.db.session import get_engine
from app.submissions import recording
from app.wiring import wired_sessions
from tests.app.utils.factories import Account, judged_result, make_submission
from tests.app.utils.live_server import live_server
from tests.app.utils.sse import Event, anext_event, auntil, next_event, until
from tests.pg_schema import PG_SERVER

STREAMS = 300
SUBMISSIONS = 30  # ten streams watch each
WAIT_S = 120.0  # generous bounds on waits for events, never measurements
pytestmark = pytest.mark.parametrize("backend_settings", ["postgres"], indirect=True)


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[str, Settings, str]]:
    """The app on uvicorn with a pool of its own, named so pg_stat_activity can count it."""
    name = f"fj_live_{uuid.uuid4().hex[:8]}"
    own = settings.model_copy(
        update={"database_url": f"{settings.database_url}&application_name={name}"})
    with live_server(own) as url:
        yield url, own, name
    get_engine(own.db_url).dispose()


def busy_connections(name: str) -> int:
    """The server's connections doing something or holding a transaction open."""
    with psycopg.connect(PG_SERVER, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
                           " AND state <> 'idle'", (name,)).fetchone()
    assert row is not None
    return row[0]


async def watch(client: httpx.AsyncClient, stack: contextlib.AsyncExitStack, sub_id: int):  # noqa: ANN201
    """An open stream of a submission, after its first state arrived."""
    response = await stack.enter_async_context(
        client.stream("GET", f"/api/submissions/{sub_id}/events"))
    assert response.status_code == 200
    lines = response.aiter_lines()
    first = await anext_event(lines)
    assert first.kind == "progress"
    return lines


async def many_streams(url: str, own: Settings, name: str, student: Account,
                       subs: list[int]) -> None:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with (httpx.AsyncClient(base_url=url, headers=student.headers, limits=limits,
                                  timeout=httpx.Timeout(WAIT_S)) as client,
                contextlib.AsyncExitStack() as stack):
        # the token's first use comes with hundreds of others at once: its last_used_at is
        # written in the request's own session (on a second connection it exhausted the pool)
        streams = await asyncio.wait_for(asyncio.gather(
            *(watch(client, stack, subs[i % len(subs)]) for i in range(STREAMS))), WAIT_S)
        other = await client.get("/api/submissions/mine", timeout=10)
        assert other.status_code == 200 and len(other.json()) == len(subs)
        assert busy_connections(name) <= 2
        pool = get_engine(own.db_url).pool
        assert isinstance(pool, QueuePool) and pool.checkedout() <= 2
        with wired_sessions(own.db_url.split("&application_name")[0])() as db:
            recording.record_result(db, own, subs[0], 1, judged_result(2, 0.1, total=2))
        watching = streams[::len(subs)]  # the streams of subs[0]
        finals = await asyncio.wait_for(asyncio.gather(
            *(auntil(lines, lambda e: e.kind == "done") for lines in watching)), WAIT_S)
        assert {e.data["verdict"] for e in finals} == {"AC"}


def test_hundreds_of_open_streams_cost_no_connection_each(served, settings, db, student):
    url, own, name = served
    subs = [make_submission(db, student, status="running").id for _ in range(SUBMISSIONS)]
    asyncio.run(many_streams(url, own, name, student, subs))


def progressed(lines: Iterator[str], log: str) -> Event:
    return until(lines, lambda e: e.data["compile"]["log"] == log, WAIT_S)


def test_a_change_committed_late_with_a_lower_id_is_still_delivered(served, settings, db,
                                                                     student):
    url = served[0]
    late_sub, early_sub = (make_submission(db, student, status="running") for _ in range(2))
    with (httpx.Client(base_url=url, headers=student.headers, timeout=WAIT_S) as client,
          client.stream("GET", f"/api/submissions/{late_sub.id}/events") as late_stream,
          client.stream("GET", f"/api/submissions/{early_sub.id}/events") as early_stream):
        late_lines, early_lines = late_stream.iter_lines(), early_stream.iter_lines()
        assert next_event(late_lines).kind == next_event(early_lines).kind == "progress"
        with wired_sessions(settings.db_url)() as late:
            row = late.get(Submission, late_sub.id)
            assert row is not None
            row.compile_log = "committed late"
            late.flush()  # the change; its note is written by the next flush
            late.flush()
            late_id = late.scalar(select(Change.id).where(
                Change.topic == f"submission:{late_sub.id}").order_by(Change.id.desc()))
            early = db.get(Submission, early_sub.id)
            early.compile_log = "committed first"
            db.commit()  # a higher id, committed (and read by the poller) first
            progressed(early_lines, "committed first")
            early_id = db.scalar(select(Change.id).where(
                Change.topic == f"submission:{early_sub.id}").order_by(Change.id.desc()))
            assert late_id < early_id
            late.commit()
        assert progressed(late_lines, "committed late").kind == "progress"
