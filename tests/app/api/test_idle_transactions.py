"""No request holds a database transaction while a slow client reads or sends (8 of 15 pooled
PostgreSQL connections sat "idle in transaction" under load). The request's session used to close
only after its response was sent: a custom run's output streamed to a client that reads slowly
kept its connection and an open transaction all along."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import event
from sqlalchemy.pool import QueuePool

from app.core.config import Settings
from app.db.models import CustomRun, utcnow
from app.db.session import get_engine, session_factory
from tests.app.pages.test_pages import login
from tests.app.utils.live_server import live_server
from tests.app.utils.processes import wait_for
from tests.pg_schema import PG_SERVER

OUTPUT_MB = 64  # far more than the sockets' buffers hold: the response is still being sent


@pytest.fixture
def tagged(settings: Settings) -> Iterator[Settings]:
    """The settings, the app's PostgreSQL connections named so pg_stat_activity finds them."""
    if not settings.database_url:
        yield settings
        return
    name = f"fj_idle_{uuid.uuid4().hex[:8]}"
    tagged = settings.model_copy(update={"database_url": f"{settings.database_url}"
                                                          f"&application_name={name}"})
    yield tagged
    get_engine(tagged.db_url).dispose()


def finished_run(settings: Settings, user_id: int) -> int:
    """A done custom run whose reference output is OUTPUT_MB on disk."""
    folder = uuid.uuid4().hex
    (settings.custom_dir / folder).mkdir(parents=True)
    with (settings.custom_dir / folder / "reference.bin").open("wb") as out:
        out.truncate(OUTPUT_MB << 20)
    with session_factory(settings.db_url)() as db:
        run = CustomRun(user_id=user_id, folder=folder, B=1, N=1, d=32, attempt=1,
                        status="done", reference="cpu-float64-v1", error="",
                        finished_at=utcnow())
        db.add(run)
        db.commit()
        return run.id


def stalled_download(url: str, path: str, token: str) -> socket.socket:
    """A client that asks for `path`, reads the first bytes, then stops reading."""
    host, port = url.removeprefix("http://").split(":")
    conn = socket.create_connection((host, int(port)), timeout=10)
    conn.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: {token}\r\n\r\n"
                 .encode())
    assert conn.recv(4096).startswith(b"HTTP/1.1 200")
    return conn


def idle_in_transaction(settings: Settings) -> int:
    name = settings.db_url.rsplit("application_name=", 1)[1]
    with psycopg.connect(PG_SERVER, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
                           " AND state LIKE 'idle in transaction%%'", (name,)).fetchone()
    assert row is not None
    return row[0]


def test_a_slow_download_holds_no_connection_nor_transaction(tagged, student):
    run_id = finished_run(tagged, student.id)
    pool = get_engine(tagged.db_url).pool
    assert isinstance(pool, QueuePool)
    with live_server(tagged) as url:
        conn = stalled_download(url, f"/api/custom-runs/{run_id}/output",
                                student.headers["Authorization"])
        try:
            wait_for(lambda: pool.checkedout() == 0 and (
                not tagged.database_url or idle_in_transaction(tagged) == 0), 10,
                "the download's connection back in the pool, none idle in transaction")
        finally:
            conn.close()


def test_the_login_holds_no_connection_while_the_route_waits_for_a_thread(client, settings,
                                                                          student):
    """A route runs in another trip through the thread pool than its login; under load that
    trip waits, and the login's transaction stayed open meanwhile ("idle in transaction")."""
    login(client, student)  # a browser's session, as pages and the API see most
    engine = get_engine(settings.db_url)
    seen: list[str] = []

    def checkout(*_args) -> None:
        seen.append("checkout")

    def checkin(*_args) -> None:
        seen.append("checkin")

    def statement(_conn, _cursor, sql, *_args) -> None:
        if "FROM changes" not in sql:  # the live poller's reads, on their own schedule
            seen.append("login" if "login_sessions" in sql else "route")

    listeners = [(engine.pool, "checkout", checkout), (engine.pool, "checkin", checkin),
                 (engine, "before_cursor_execute", statement)]
    for target, name, function in listeners:
        event.listen(target, name, function)
    try:
        assert client.get("/api/submissions/mine").status_code == 200
    finally:
        for target, name, function in listeners:
            event.remove(target, name, function)
    after_login = seen[seen.index("login"):]
    assert after_login.index("checkin") < after_login.index("route"), seen
