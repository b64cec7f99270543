"""The live streams over real HTTP (uvicorn on a free port), on both databases: a result that
another process records reaches an open stream; someone else's submission is refused before
anything streams; the scoreboard stream tells of a board change; idle streams get keepalives;
a client that leaves takes its subscription with it."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from sqlalchemy import func, select

from app.changefeed.changes import SCOREBOARD, note_change
from app.core.config import Settings
from app.db.models import Change
from app.db.session import get_engine
from tests.app.utils.factories import Account, judged_result, make_submission
from tests.app.utils.live_server import live_server
from tests.app.utils.processes import REPO, settings_env, wait_for
from tests.app.utils.sse import next_event, until

READ_TIMEOUT_S = 60.0  # generous: a wait for an event, never a measurement


@dataclass
class Served:
    """The app served for real, with its own database URL (its own connection pool)."""

    url: str
    settings: Settings


def served_settings(settings: Settings, **overrides: object) -> Settings:
    """The test's settings with a pool the server alone uses (named, on PostgreSQL)."""
    if settings.database_url:
        name = f"fj_live_{uuid.uuid4().hex[:8]}"
        overrides["database_url"] = f"{settings.database_url}&application_name={name}"
    return settings.model_copy(update=overrides)


@pytest.fixture
def served(settings: Settings) -> Iterator[Served]:
    own = served_settings(settings, live_keepalive_s=0.5)
    with live_server(own) as url:
        yield Served(url, own)
    get_engine(own.db_url).dispose()


def stream(served: Served, account: Account, path: str):  # noqa: ANN201 - httpx's own type
    client = httpx.Client(base_url=served.url, headers=account.headers,
                          timeout=httpx.Timeout(READ_TIMEOUT_S))
    return client, client.stream("GET", path)


def open_streams(served: Served) -> int:
    text = httpx.get(f"{served.url}/metrics", timeout=READ_TIMEOUT_S).text
    line = next(x for x in text.splitlines() if x.startswith("flashjudge_live_streams "))
    return int(float(line.split()[1]))


def record_elsewhere(settings: Settings, submission_id: int, result: dict) -> None:
    """Record a result in another process, through the control worker's own task function, in
    a process started as the control worker is (its entry installs the session listeners)."""
    code = ("import json, sys\nimport app.control.entry\n"
            "from app.control.tasks import record_result\n"
            "sys.exit(0 if record_result(int(sys.argv[1]), 1, json.loads(sys.argv[2])) else 3)")
    env = settings_env(settings, FLASHJUDGE_DATABASE_URL=settings.db_url)
    done = subprocess.run([sys.executable, "-c", code, str(submission_id), json.dumps(result)],
                          env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_result_recorded_by_another_process_reaches_the_open_stream(served, settings, db,
                                                                      student):
    sub = make_submission(db, student, status="running")
    client, request = stream(served, student, f"/api/submissions/{sub.id}/events")
    with client, request as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = response.iter_lines()
        first = next_event(lines)
        assert (first.kind, first.data["status"]) == ("progress", "running")
        assert "error" not in first.data  # a student's view
        record_elsewhere(settings, sub.id, judged_result(3, 0.25, total=3))
        last = until(lines, lambda e: e.kind == "done")
        assert (last.data["verdict"], last.data["passed"]) == ("AC", 3)
        assert [t["id"] for t in last.data["tests"]] == ["t01", "t02", "t03"]
        assert list(lines) == []  # the stream ends after `done`


def test_someone_elses_submission_is_refused_before_anything_streams(served, db, student,
                                                                      other_student):
    sub = make_submission(db, other_student)
    for account, path, status in ((student, f"/api/submissions/{sub.id}/events", 404),
                                  (student, f"/api/submissions/{sub.id + 999}/events", 404),
                                  (None, f"/api/submissions/{sub.id}/events", 401),
                                  (None, "/api/scoreboard/events", 401)):
        headers = account.headers if account else {}
        response = httpx.get(served.url + path, headers=headers, timeout=READ_TIMEOUT_S)
        assert response.status_code == status, path
        assert response.headers["content-type"] == "application/json"
        assert response.json()["detail"]
    assert open_streams(served) == 0


def test_the_scoreboard_stream_tells_of_a_board_change(served, db, student):
    client, request = stream(served, student, "/api/scoreboard/events")
    with client, request as response:
        lines = response.iter_lines()
        first = next_event(lines)  # at connect: the newest change this process knows
        assert first.kind == "scoreboard" and isinstance(first.data["seq"], int)
        note_change(db, SCOREBOARD)
        db.commit()
        newest = db.scalar(select(func.max(Change.id)).where(Change.topic == SCOREBOARD))
        changed = until(lines, lambda e: e.kind == "scoreboard")
        assert changed.data == {"seq": newest}


def test_an_idle_stream_gets_keepalive_comments(served, db, student):
    sub = make_submission(db, student)
    client, request = stream(served, student, f"/api/submissions/{sub.id}/events")
    with client, request as response:
        lines = response.iter_lines()
        assert next_event(lines).kind == "progress"
        assert next_event(lines).kind == "comment"  # nothing changed: a keepalive


def test_a_client_that_leaves_takes_its_subscription_with_it(served, db, student):
    sub = make_submission(db, student)
    client, request = stream(served, student, f"/api/submissions/{sub.id}/events")
    with client, request as response:
        lines = response.iter_lines()  # dropping it would close the response
        assert next_event(lines).kind == "progress"
        assert open_streams(served) == 1
    wait_for(lambda: open_streams(served) == 0, READ_TIMEOUT_S, "the subscription to end")
