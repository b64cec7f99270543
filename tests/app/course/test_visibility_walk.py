"""What leaves the service for a student obeys the assignment's visibility rule on every route:
a student with a judged submission walks every GET route of the app (pages, API, CSV, live
streams, the scoreboard of the assignment named or not) under each rule before the due time.
Under "verdicts" and "none" no time of anyone's appears anywhere; under every rule a hidden
test's expected value never does; after the due time the times are back."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.course import assignment_config
from app.db.models import Assignment, Submission, utcnow
from app.main import create_app
from app.submissions import recording
from tests.app.utils import routes
from tests.app.utils.factories import PASSWORD, Account, judged_result, make_submission
from tests.app.utils.live_server import live_server

pytestmark = pytest.mark.slow
SECONDS = 4.56789  # each test's time: "4.568" on a page, 4.56789 in JSON, 45.679 in all
TIMES = re.compile(r"4\.56[789]|45\.6[78]")
EXPECTED = "0.918273"  # what the hidden test wanted: a student never sees it
STREAM_BYTES = 200_000  # a live stream is judged by its first events


def judged(db: Session, settings: Settings, account: Account) -> Submission:
    sub = make_submission(db, account)
    result = judged_result(8, SECONDS)
    result["tests"][9]["message"] = (f"fail: 9 of 4,096 values over tolerance 0.005, max error "
                                     f"0.5; first at (0, 3, 5): got 0.5, want {EXPECTED}")
    assert recording.record_result(db, settings, sub.id, 1, result)
    return sub


def ruled(db: Session, settings: Settings, visibility: str, due: str) -> Assignment:
    config = assignment_config.Config(name=settings.suite, suite=settings.suite,
                                      visibility=visibility, hidden_tests=True, due_at=due)
    return assignment_config.apply(db, None, config, settings.suite)


def everything(url: str, account: Account, paths: list[str]) -> Iterator[tuple[str, str]]:
    """(path, what the student got) for each path: pages as the signed-in browser sees them,
    a stream's first events."""
    with httpx.Client(base_url=url, timeout=30) as browser:
        signed = browser.post("/login", data={"username": account.username,
                                              "password": PASSWORD})
        assert signed.status_code == 303
        for path in paths:
            yield path, read(browser, path)


def read(browser: httpx.Client, path: str) -> str:
    """The whole answer; of a live stream (which may wait for the next change) its first
    event, which carries the state a watcher starts from."""
    got = b""
    with browser.stream("GET", path) as response:
        if "text/event-stream" not in response.headers.get("content-type", ""):
            return response.read().decode(errors="replace")
        for chunk in response.iter_bytes():
            got += chunk
            if b"\n\n" in got.replace(b": keepalive\n\n", b"") or len(got) > STREAM_BYTES:
                break
    return got.decode(errors="replace")


def walked(settings: Settings, sub: Submission) -> list[str]:
    paths = [path for _, path in routes.walk(create_app(settings), {"GET"}, fill=str(sub.id))]
    named = f"?assignment={settings.suite}"
    return paths + [f"/api/scoreboard{named}", f"/api/scoreboard.csv{named}",
                    f"/scoreboard{named}", f"/partials/scoreboard{named}"]


@pytest.mark.parametrize("visibility", ["verdicts", "none"])
def test_no_time_and_no_expected_value_leaves_before_the_due_time(
        settings: Settings, db: Session, student: Account, other_student: Account,
        visibility: str):
    ruled(db, settings, visibility, "2099-01-01T00:00Z")
    sub = judged(db, settings, student)
    judged(db, settings, other_student)  # a classmate's times are not to be seen either
    with live_server(settings) as url:
        seen = dict(everything(url, student, walked(settings, sub)))
    assert len(seen) > 60
    assert {p: TIMES.findall(text) for p, text in seen.items() if TIMES.search(text)} == {}
    assert [p for p, text in seen.items() if EXPECTED in text] == []
    assert "t10" in seen[f"/api/submissions/{sub.id}"] or visibility == "none"


def test_after_the_due_time_times_show_and_expected_values_still_do_not(
        settings: Settings, db: Session, student: Account, other_student: Account):
    rule = ruled(db, settings, "verdicts", "2099-01-01T00:00Z")
    rule.due_at = utcnow() - timedelta(minutes=1)
    db.commit()
    sub = judged(db, settings, student)
    judged(db, settings, other_student)
    with live_server(settings) as url:
        seen = dict(everything(url, student, walked(settings, sub)))
    for path in (f"/api/submissions/{sub.id}", "/api/scoreboard", "/api/scoreboard.csv",
                 "/scoreboard"):
        assert TIMES.search(seen[path]), path
    assert [p for p, text in seen.items() if EXPECTED in text] == []
    assert "got 0.5" in seen[f"/api/submissions/{sub.id}"]  # where and what it wrote stay


def test_the_board_under_verdicts_ranks_by_score_and_passed_alone(
        client, settings: Settings, db: Session, student: Account, other_student: Account,
        ta: Account):
    """Equal scores share a rank: an order by time would tell who is faster."""
    ruled(db, settings, "verdicts", "2099-01-01T00:00Z")
    judged(db, settings, student)
    judged(db, settings, other_student)
    rows = client.get("/api/scoreboard", headers=student.headers).json()["rows"]
    assert [(r["rank_label"], r["time"]) for r in rows] == [("1=", None), ("1=", None)]
    assert all(c["seconds"] is None for r in rows for c in r["tests"].values())
    as_ta = client.get("/api/scoreboard", headers=ta.headers).json()["rows"]
    assert as_ta[0]["time"] == pytest.approx(10 * SECONDS)


def test_a_closed_assignment_is_not_named_to_a_student(client, db: Session, student: Account,
                                                       ta: Account):
    made = client.post("/api/admin/assignments", headers=ta.headers,
                       json={"name": "secret-next", "suite": "hw4", "position": 1,
                             "open": False, "due_at": "2099-01-01T00:00Z"})
    assert made.status_code in (200, 201), made.text
    answer = client.get("/api/deadline", params={"assignment": "secret-next"},
                        headers=student.headers)
    assert answer.status_code == 404 and "secret-next" in answer.json()["detail"]
    assert "2099" not in answer.text
    unknown = client.get("/api/deadline", params={"assignment": "nope"},
                         headers=student.headers)
    assert "secret-next" not in unknown.text  # the list of open ones leaves it out
    assert client.get("/api/deadline", params={"assignment": "secret-next"},
                      headers=ta.headers).json()["due_at"].startswith("2099")
