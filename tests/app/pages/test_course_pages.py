"""Pages that act and say so: styled errors, login back to where one was, the submit box of the
chosen language, shapes on the result page, no chart for a compile error, the TA fragments."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from app.course import assignments, deadlines
from app.db.models import Assignment, User, WorkerStatus, utcnow
from app.submissions import recording
from flashjudge.contract import LANGUAGES
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import judged_result, live_worker, make_submission

GPU = ("cuda-program", "cuda-kernel")


def csrf_of(client) -> dict[str, str]:
    page = client.get("/submissions", headers=HTML).text
    token = page.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]
    return {"X-CSRF-Token": token, "HX-Request": "true"}


def test_error_pages_are_styled_for_browsers_and_json_for_the_api(client, student):
    missing = client.get("/no/such/page", headers=HTML)
    assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]
    assert '<link rel="stylesheet" href="/static/style.css">' in missing.text
    assert "Not found" in missing.text and "no such page" in missing.text
    api = client.get("/api/no/such/thing", headers=HTML)
    assert api.status_code == 404 and api.json() == {"detail": "Not Found", "field": None}
    login(client, student)
    refused = client.get("/admin", headers=HTML)
    assert refused.status_code == 403 and "Not allowed" in refused.text
    assert 'class="who">alice (student)' in refused.text  # the navigation is still there


def test_logging_in_returns_to_the_page_that_asked(client, student):
    away = client.get("/scoreboard", headers=HTML, follow_redirects=False)
    assert away.status_code == 303 and away.headers["location"].endswith("next=%2Fscoreboard")
    page = client.get(away.headers["location"], headers=HTML).text
    assert '<input type="hidden" name="next" value="/scoreboard">' in page
    form = {"username": "alice", "password": student.password, "next": "/scoreboard"}
    back = client.post("/login", data=form, follow_redirects=False)
    assert back.headers["location"] == "/scoreboard"


def test_login_never_sends_anyone_to_another_site(client, student):
    for target in ("//evil.example", "https://evil.example/", "/\\evil.example", "javascript:x"):
        form = {"username": "alice", "password": student.password, "next": target}
        assert client.post("/login", data=form, follow_redirects=False).headers[
            "location"] == "/submit", target


def offered(page: str) -> list[str]:
    """The languages before the "cannot be judged now" group, in order."""
    return re.findall(r'<option value="([a-z-]+)"', page.split("<optgroup", 1)[0])


def test_the_submit_page_offers_what_live_workers_judge(client, db, student, ta):
    login(client, student)
    page = client.get("/submit", headers=HTML).text
    assert "No judge worker is connected right now" in page  # uploads are accepted and wait
    assert offered(page) == list(LANGUAGES) and "<optgroup" not in page
    live_worker(db)
    page = client.get("/submit", headers=HTML).text
    assert offered(page) == ["c-program"]
    assert '<span id="drop-label">Drop hw4.c (and a Makefile)</span>' in page
    # a CPU-only deployment: no alarm for a student until they pick a CUDA language
    assert '<p id="capacity" class="banner" role="alert" hidden></p>' in page
    assert '<optgroup label="cannot be judged now">' in page
    assert 'data-why="no GPU worker is connected: cuda-kernel cannot be judged now' in page
    login(client, ta)
    page = client.get("/submit", headers=HTML).text
    assert "no GPU worker is connected" in page and "Not offered now: cuda-program, cuda-kernel" \
        in page and 'role="status"' in page
    live_worker(db, "gpu0@node", GPU, gpu="NVIDIA H100")
    page = client.get("/submit", headers=HTML).text
    assert 'value="cuda-kernel" data-main="solve.cu"' in page
    assert '<span id="drop-label">Drop hw4.cu (and a Makefile)</span>' in page  # the default


def test_the_submit_page_shows_the_time_left(client, db, student, ta):
    live_worker(db)
    due = datetime.now(UTC) + timedelta(days=3, hours=4, minutes=30)
    deadlines.set_deadline(db, db.get(User, ta.id), "hw4-mini", due, "refuse")
    login(client, student)
    assert "hw4-mini is due" in (page := client.get("/submit", headers=HTML).text)
    assert "3 d 4 h left" in page


def test_the_result_page_shows_shapes_and_a_compile_error_draws_no_chart(client, db, settings,
                                                                         student):
    judged = make_submission(db, student)
    result = judged_result(9, 0.5)
    result["max_score"] = 100
    recording.record_result(db, settings, judged.id, 1, result)
    failed = make_submission(db, student)
    ce = judged_result(0, 0.0)
    ce["compile"] = {"ok": False, "log": "hw4.c:1: error: expected ';'"}
    for test in ce["tests"]:
        test["verdict"], test["seconds"] = "CE", 0.0
    recording.record_result(db, settings, failed.id, 1, ce)
    login(client, student)
    page = client.get(f"/submissions/{judged.id}", headers=HTML).text
    assert '<td class="shape">320 × 128 × 32</td>' in page  # hw4-mini t01
    assert '<strong id="score">57/100</strong>' in page and "Time against limit" in page
    page = client.get(f"/submissions/{failed.id}", headers=HTML).text
    assert "error: expected" in page and "<svg" not in page and "Time against limit" not in page


def test_the_ta_page_says_how_long_ago_a_worker_was_seen(client, db, ta):
    live_worker(db, "gpu0@node", GPU, gpu="NVIDIA H100")
    db.get(WorkerStatus, "gpu0@node").last_seen = utcnow() - timedelta(seconds=12)
    db.commit()
    login(client, ta)
    page = client.get("/admin", headers=HTML).text
    # 12 s when written; a loaded machine may take a second or more to log in and render
    assert re.search(r">1[2-9] s ago</td>", page) and "<td>cuda-kernel, cuda-program</td>" in page
    assert '{% include' not in page and 'id="deadline-box"' in page


def test_ta_fragments_answer_html_saying_what_was_done(client, db, settings, student, ta):
    sub = make_submission(db, student)
    recording.record_result(db, settings, sub.id, 1, judged_result(3, 0.1))
    queued = make_submission(db, student, language="cuda-kernel")
    login(client, ta)
    headers = csrf_of(client)
    done = client.post("/partials/admin/rejudge-all", headers=headers)
    assert done.status_code == 200 and "rejudging 2 submission(s)" in done.text
    cancelled = client.post("/partials/admin/cancel-queued", headers=headers,
                            data={"language": "cuda-kernel"})
    assert "cancelled 1 queued cuda-kernel submission(s)" in cancelled.text
    assert client.get(f"/api/submissions/{queued.id}", headers=ta.headers).json()[
        "verdict"] == "CANCELLED"


def test_a_refused_ta_action_answers_its_reason(client, db, ta):
    login(client, ta)
    refused = client.post("/partials/admin/deadline", headers=csrf_of(client),
                          data={"due_at": "next friday", "late_policy": "refuse"})
    assert refused.status_code == 422 and "is not an ISO 8601 time" in refused.json()["detail"]
    picked = client.post("/partials/admin/deadline", headers=csrf_of(client),  # the picker's
                         data={"due_at": "2026-12-01T23:59", "late_policy": "refuse"})  # value
    assert "2026-12-01T23:59:00Z" in picked.text  # read in the course's zone (UTC here)
    saved = client.post("/partials/admin/deadline", headers=csrf_of(client),
                        data={"due_at": "2026-12-01T23:59+08:00", "late_policy": "penalty",
                              "penalty_per_day": "10", "penalty_cap": "50"})
    assert "deadline saved" in saved.text and "2026-12-01T15:59:00Z" in saved.text
    assert "10% off per started day, at most 50%" in saved.text


def test_the_submit_page_picks_among_open_assignments_only_when_there_are_several(
        client, db, settings, student):
    login(client, student)
    page = client.get("/submit", headers=HTML).text
    assert 'name="assignment"' in page and "<select name=\"assignment\">" not in page
    first = assignments.in_term(db, settings.suite)[0]
    db.add(Assignment(term_id=first.term_id, name="challenge", title="Kernel challenge",
                      suite="hw4", position=1, due_at=utcnow() + timedelta(days=2)))
    db.add(Assignment(term_id=first.term_id, name="hidden", suite="hw4", position=2,
                      is_open=False))
    db.commit()
    page = client.get("/submit?assignment=challenge", headers=HTML).text
    options = re.findall(r'<option value="(\w[\w-]*)"( selected)?>([^<]*)</option>', page)
    assert [(v, bool(s), t) for v, s, t in options if v in ("hw4-mini", "challenge",
                                                          "hidden")] == [
        ("hw4-mini", False, "hw4-mini"), ("challenge", True, "Kernel challenge")]
    assert "challenge is due" in page and "left" in page


def test_the_course_setup_page_creates_closes_exports_and_starts_a_term(client, db, ta,
                                                                        student):
    login(client, ta)
    page = client.get("/admin/course", headers=HTML).text
    assert "Course setup" in page and "hw4-mini" in page
    headers = csrf_of(client)
    made = client.post("/partials/admin/course/save", headers=headers, data={
        "create": "1", "name": "challenge", "title": "Kernel challenge", "suite": "hw4",
        "visibility": "verdicts", "hidden_tests": "on", "open": "on", "late_policy": "refuse"})
    assert made.status_code == 200 and "challenge created" in made.text
    assert "Kernel challenge" in made.text
    closed = client.post("/partials/admin/course/challenge/close", headers=headers)
    assert "challenge closed" in closed.text
    exported = client.get("/admin/course/challenge/export?format=toml", headers=HTML)
    assert 'visibility = "verdicts"' in exported.text and "hidden_tests = true" in exported.text
    bad = client.post("/partials/admin/course/import", headers=headers,
                      data={"format": "toml", "text": 'name = "x"\nsuite = "hw9"'})
    assert bad.status_code == 422 and "unknown suite 'hw9'" in bad.json()["detail"]
    started = client.post("/partials/admin/course/next", headers=headers,
                          data={"name": "spring"})
    assert "term spring started" in started.text and "archived" in started.text


def test_the_ta_page_sets_the_deadline_and_extensions_of_the_assignment_chosen(
        client, db, settings, ta, student):
    first = assignments.in_term(db, settings.suite)[0]
    db.add(Assignment(term_id=first.term_id, name="challenge", suite="hw4", position=1))
    db.commit()
    login(client, ta)
    page = client.get("/admin?assignment=challenge", headers=HTML).text
    assert "The public scoreboard of challenge is live" in page
    assert "/partials/admin/deadline?assignment=challenge" in page
    saved = client.post("/partials/admin/deadline?assignment=challenge",
                        headers=csrf_of(client), data={"due_at": "2026-12-10T23:59+08:00"})
    assert saved.status_code == 200 and "challenge</strong> is due" in saved.text
    granted = client.post("/partials/admin/extension?assignment=challenge",
                          headers=csrf_of(client),
                          data={"username": "alice", "due_at": "2026-12-12T23:59+08:00"})
    assert "extension granted to alice" in granted.text
    db.expire_all()
    assert first.due_at is None  # the other assignment kept no deadline
