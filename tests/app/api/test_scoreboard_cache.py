"""Boards served from the per-process cache: built once per version, strong ETags, 304s, gzip,
a result recorded by the control worker (another process) changing what is served."""

from __future__ import annotations

import gzip
import html
import json
from pathlib import Path

import pytest
from sqlalchemy import delete, event, insert

from app.accounts.recent_sessions import RECENT
from app.db.models import Change, LoginSession, User, utcnow
from app.db.session import get_engine
from app.scoreboard.cache import BoardCache
from app.submissions import recording
from app.submissions.dispatch import control_app
from flashjudge.contract import Queue, Task
from tests.app.api.test_auth_api import login_page_session
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import judged_result, make_submission
from tests.app.utils.processes import start_worker, stop, wait_for

PLAIN = {"Accept-Encoding": "identity"}
GZIP = {"Accept-Encoding": "gzip"}


def judged(db, settings, account, passed: int, seconds: float) -> int:
    sub = make_submission(db, account)
    recording.record_result(db, settings, sub.id, 1, judged_result(passed, seconds))
    return sub.id


@pytest.mark.parametrize("path", ["/api/scoreboard", "/api/scoreboard.csv",
                                  "/api/scoreboard?gpu_model=NVIDIA+A2"])
def test_a_matching_if_none_match_gets_304_with_no_body(client, db, settings, student, path):
    judged(db, settings, student, 9, 0.5)
    first = client.get(path, headers={**student.headers, **PLAIN})
    etag = first.headers["etag"]
    assert first.status_code == 200 and etag.startswith('"') and first.content
    again = client.get(path, headers={**student.headers, **PLAIN, "If-None-Match": etag})
    assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", etag)
    listed = client.get(path, headers={**student.headers, "If-None-Match": f'"x", W/{etag}'})
    assert listed.status_code == 304  # a list, a weak form: still the same board
    stale = client.get(path, headers={**student.headers, "If-None-Match": '"an-old-board"'})
    assert stale.status_code == 200 and stale.content == first.content


def test_gzip_and_plain_are_the_same_board_under_two_etags(client, db, settings, student,
                                                            other_student):
    judged(db, settings, student, 9, 0.5)
    judged(db, settings, other_student, 10, 0.25)
    plain = client.get("/api/scoreboard", headers={**student.headers, **PLAIN})
    zipped = client.get("/api/scoreboard", headers={**student.headers, **GZIP})
    assert zipped.headers["content-encoding"] == "gzip" and "content-encoding" not in plain.headers
    assert zipped.content == plain.content  # httpx undid the gzip
    assert zipped.headers["etag"] == plain.headers["etag"][:-1] + '-gz"'
    assert len(zipped.content) > int(zipped.headers["content-length"])
    for tag in (plain.headers["etag"], zipped.headers["etag"]):  # either one: not changed
        assert client.get("/api/scoreboard", headers={**student.headers, **GZIP,
                                                      "If-None-Match": tag}).status_code == 304


def test_requests_are_served_without_building_the_board_again(client, db, settings, student):
    judged(db, settings, student, 9, 0.5)
    first = client.get("/api/scoreboard", headers=student.headers)
    assert "rebuild;dur=" in first.headers["server-timing"]  # it paid for the build
    cache = client.app.state.board_cache
    built = cache.rebuilds
    for _ in range(25):
        answer = client.get("/api/scoreboard", headers=student.headers)
        assert answer.status_code == 200 and "server-timing" not in answer.headers
    assert cache.rebuilds == built
    judged(db, settings, student, 10, 0.5)
    changed = client.get("/api/scoreboard", headers=student.headers)
    assert changed.json()["rows"][0]["passed"] == 10
    assert cache.rebuilds == built + 3  # the assignment, the snapshot and its JSON, once
    client.get("/api/scoreboard", headers=student.headers)
    assert cache.rebuilds == built + 3


def test_each_viewer_gets_their_row_marked_and_their_own_etag(client, db, settings, student,
                                                              other_student):
    judged(db, settings, student, 10, 0.5)
    judged(db, settings, other_student, 10, 0.25)
    tables = {}
    for account in (student, other_student):
        for encoding in (PLAIN, GZIP):
            page = client.get("/partials/scoreboard", headers={**account.headers, **encoding})
            mine = page.text.split(f'data-user="{account.username}"')[1].split("</tr>")[0]
            assert 'class="mine"' in mine and "(you)" in mine
            assert page.text.count("(you)") == 1
            tables[account.username, encoding["Accept-Encoding"]] = page
    alice, bob = tables["alice", "gzip"], tables["bob", "gzip"]
    assert alice.headers["etag"] != bob.headers["etag"]
    assert alice.text == tables["alice", "identity"].text
    same = client.get("/partials/scoreboard", headers={**student.headers,
                                                       "If-None-Match": alice.headers["etag"]})
    assert same.status_code == 304 and same.content == b""


def test_the_page_embeds_the_table_and_listens_for_changes(client, db, settings, student):
    judged(db, settings, student, 10, 0.5)
    login(client, student)
    page = client.get("/scoreboard", headers=HTML).text
    assert 'data-events="/api/scoreboard/events"' in page and 'hx-trigger="board-changed"' in page
    assert "every 5s" not in page  # pushed, not polled
    assert 'class="mine"' in page.split('data-user="alice"')[1].split("</tr>")[0]
    etag = html.unescape(page.split('data-etag="')[1].split('"')[0])
    partial = client.get("/partials/scoreboard", headers={**HTML, "If-None-Match": etag})
    assert partial.status_code == 304  # the page's copy is current


@pytest.fixture
def control_worker(settings, tmp_path: Path):
    proc = start_worker(settings, "control", tmp_path / "control.log")
    yield proc
    stop(proc)


@pytest.mark.slow
def test_a_result_recorded_by_the_control_worker_changes_the_board_and_its_etag(
        client, db, settings, student, other_student, control_worker):
    judged(db, settings, student, 8, 0.5)
    before = client.get("/api/scoreboard", headers=student.headers)
    assert [r["user"] for r in before.json()["rows"]] == ["alice"]
    sub = make_submission(db, other_student)
    control_app(settings).send_task(str(Task.RECORD_RESULT), queue=str(Queue.CONTROL),
                                    args=[sub.id, 1, judged_result(10, 0.25), None])
    tag = before.headers["etag"]

    def moved():
        answer = client.get("/api/scoreboard", headers={**student.headers, "If-None-Match": tag})
        return answer if answer.status_code == 200 else None

    after = wait_for(moved, 60, "the control worker's result to reach the served board")
    assert [(r["user"], r["rank"]) for r in after.json()["rows"]] == [("bob", 1), ("alice", 2)]
    assert after.headers["etag"] != tag
    again = client.get("/api/scoreboard",
                       headers={**student.headers, "If-None-Match": after.headers["etag"]})
    assert again.status_code == 304


def test_a_frozen_board_keeps_its_etag_for_students_while_results_come_in(client, db, settings,
                                                                          student, ta):
    judged(db, settings, student, 5, 1.0)
    client.post("/api/admin/scoreboard/freeze", headers=ta.headers)
    public = client.get("/api/scoreboard", headers=student.headers)
    live = client.get("/api/scoreboard?live=true", headers=ta.headers)
    judged(db, settings, student, 10, 1.0)  # submitted after the freeze
    unchanged = client.get("/api/scoreboard", headers={**student.headers,
                                                      "If-None-Match": public.headers["etag"]})
    assert unchanged.status_code == 304  # a new version, the same bytes: no refetch
    moved = client.get("/api/scoreboard?live=true",
                       headers={**ta.headers, "If-None-Match": live.headers["etag"]})
    assert moved.status_code == 200 and moved.json()["rows"][0]["passed"] == 10


def test_gzip_bodies_decode_with_the_standard_library(client, db, settings, student,
                                                      other_student):
    """The pieces put together are one valid gzip member (checked by gzip, not only httpx)."""
    judged(db, settings, student, 10, 0.5)
    judged(db, settings, other_student, 7, 0.25)
    with client.stream("GET", "/partials/scoreboard",
                       headers={**student.headers, **GZIP}) as answer:
        raw = b"".join(answer.iter_raw())
    assert '(you)' in gzip.decompress(raw).decode()


def statements_of(settings, request) -> list[str]:
    """The SQL one request sends (the live poller's reads of the change feed, on their own
    schedule in the same process, left out)."""
    sent: list[str] = []

    def note(_conn, _cursor, statement, *_args) -> None:
        if "FROM changes" not in statement:
            sent.append(statement)

    engine = get_engine(settings.db_url)
    event.listen(engine, "before_cursor_execute", note)
    try:
        request()
    finally:
        event.remove(engine, "before_cursor_execute", note)
    return sent


@pytest.fixture
def remembering(client, monkeypatch) -> BoardCache:
    """The app's board cache and this process's remembered sessions, trusted for an hour: what
    a test then sees read again was read because a move or a logout was heard of, not because
    seconds passed."""
    monkeypatch.setattr(RECENT, "keep_s", 3600.0)
    client.app.state.board_cache = BoardCache(state_keep_s=3600.0)
    return client.app.state.board_cache


def test_a_cached_board_costs_no_query(client, db, settings, student, remembering):
    judged(db, settings, student, 9, 0.5)
    login(client, student)  # a browser's session, as students read the board
    assert client.get("/api/scoreboard").status_code == 200  # built and kept
    client.portal.call(client.app.state.live.stop)  # no poller reading meanwhile: all is heard
    for path in ("/api/scoreboard", "/partials/scoreboard"):
        client.get(path)  # the page's table built once
        sent = statements_of(settings, lambda p=path: client.get(p))
        assert sent == [], (path, sent)  # the session, the version, the bytes: all in memory


def test_a_logout_is_not_outlived_by_the_remembered_session(settings, client, student,
                                                            remembering):
    csrf = login_page_session(client, "alice", student.password)
    copied = client.cookies.get("fj_session")
    assert client.get("/api/scoreboard").status_code == 200  # the session remembered
    client.post("/logout", headers={"X-CSRF-Token": csrf})
    client.cookies.set("fj_session", copied)  # a copy of the cookie from before
    refused = client.get("/api/scoreboard")
    assert refused.status_code == 401 and "logged out" in refused.json()["detail"]


def test_a_role_changed_reaches_the_next_board_of_a_remembered_session(client, db, settings,
                                                                       student, other_student,
                                                                       remembering):
    """Made a TA, a student's next board is a TA's (which shows a student who left the public
    board), though the process remembered their session as a student's a moment before."""
    judged(db, settings, other_student, 9, 0.5)
    bob = db.get(User, other_student.id)
    bob.board_hidden = True
    db.commit()
    login(client, student)
    assert [r["user"] for r in client.get("/api/scoreboard").json()["rows"]] == []
    db.get(User, student.id).role = "ta"
    db.commit()
    assert [r["user"] for r in client.get("/api/scoreboard").json()["rows"]] == ["bob"]


def test_a_session_ended_elsewhere_is_forgotten_once_the_change_feed_says_so(
        client, settings, student, remembering):
    """Another API process logged the browser out: its row went and the feed noted it. This
    process, which remembers the session for the board, forgets it when its poller reads that."""
    login(client, student)
    assert client.get("/api/scoreboard").status_code == 200  # remembered from here on
    with get_engine(settings.db_url).begin() as conn:
        conn.execute(delete(LoginSession))
        conn.execute(insert(Change).values(topic="sessions", created_at=utcnow()))
    wait_for(lambda: client.get("/api/scoreboard").status_code == 401, 30,
             "the ended session refused")


def test_a_result_recorded_elsewhere_is_made_ready_before_any_request_asks(
        client, db, settings, student, other_student, control_worker, remembering):
    """The control worker (another process) records a result: this process's live poller reads
    the move from the change feed and has the board made again before it tells the pages, so
    the request that first gets the new board did not build it, nor wait for a build."""
    judged(db, settings, student, 8, 0.5)
    sub = make_submission(db, other_student)
    login(client, student)
    tag = client.get("/api/scoreboard").headers["etag"]  # whatever this process's commits moved
    control_app(settings).send_task(str(Task.RECORD_RESULT), queue=str(Queue.CONTROL),
                                    args=[sub.id, 1, judged_result(10, 0.25), None])

    def moved():
        answer = client.get("/api/scoreboard", headers={"If-None-Match": tag})
        return answer if answer.status_code == 200 else None

    after = wait_for(moved, 60, "the control worker's result to reach the served board")
    assert [(r["user"], r["rank"]) for r in after.json()["rows"]] == [("bob", 1), ("alice", 2)]
    assert "server-timing" not in after.headers  # made by the poller's refresh, not here
    assert remembering.refreshes >= 1


def test_a_changed_visibility_rule_reaches_the_next_request(client, db, settings, student, ta):
    judged(db, settings, student, 9, 0.5)
    assert client.get("/api/scoreboard", headers=student.headers).status_code == 200
    address = f"/api/admin/assignments/{settings.suite}"
    config = json.loads(client.get(f"{address}/export", headers=ta.headers,
                                   params={"format": "json"}).json()["text"])
    hidden = client.put(address, headers=ta.headers,
                        json={**config, "visibility": "none", "due_at": "2099-01-01T00:00Z"})
    assert hidden.status_code == 200, hidden.text
    refused = client.get("/api/scoreboard", headers=student.headers)
    assert refused.status_code == 403 and "shown after the due time" in refused.text
    assert client.get("/api/scoreboard", headers=ta.headers).status_code == 200
    shown = client.put(address, headers=ta.headers, json={**config, "visibility": "all"})
    assert shown.status_code == 200, shown.text
    assert client.get("/api/scoreboard", headers=student.headers).status_code == 200
