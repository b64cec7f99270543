"""How the pages lay out, in Chromium against a real uvicorn, for a course in Asia/Taipei seen from
a laptop in Berlin: text left and numbers right, the side-by-side view inside a 1280 px window,
the roster picker on a line of its own with a downloadable example, "Rejudge all" showing the
new state at once, a history of one passing submission as points with verdicts, and times in
the course's zone with the viewer's own beside them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.orm import Session

from app.accounts import users
from app.core.config import Settings
from app.course import deadlines
from app.db.models import Submission, SubmissionFile, User, utcnow
from app.similarity import fingerprinting
from app.submissions import recording
from flashjudge.contract import FingerprintPayload
from tests.app.similarity.variants import disguised_tiled, source
from tests.app.utils.factories import PASSWORD, judged_result
from tests.app.utils.served_site import (
    Site,
    chromium,
    needs_chromium,
    served,
    shoot,
    sideways,
)

pytestmark = [pytest.mark.slow, needs_chromium]
LONG = "// " + "a comment far wider than half a 1280 px window, " * 6 + "\n"


def judged(db: Session, settings: Settings, user_id: int, text: str, passed: int,
           minutes_ago: int) -> int:
    sub = Submission(user_id=user_id, language="cuda-program", suite=settings.suite,
                     status="queued", attempt=1, compile_log="", error="",
                     created_at=utcnow() - timedelta(minutes=minutes_ago))
    sub.files = [SubmissionFile(name="hw4.cu", content=text.encode())]
    db.add(sub)
    db.commit()
    result = judged_result(passed, 0.5)
    if passed < 10:
        result["tests"][9]["message"] = "fail: 4,096 of 4,096 values over tolerance 0.005"
    assert recording.record_result(db, settings, sub.id, 1, result)
    fingerprinting.fingerprint(db, FingerprintPayload(submission_id=sub.id))
    return sub.id


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with served(tmp_path_factory.mktemp("layout"),
                FLASHJUDGE_COURSE_TIMEZONE="Asia/Taipei") as running, running.db() as db:
        alice, bob = (running.accounts[n].id for n in ("alice", "bob"))
        tiled = LONG + source("tiled.cu")
        for passed, minutes_ago in ((0, 50), (0, 40), (10, 30)):  # one passing submission
            judged(db, running.settings, alice, tiled, passed, minutes_ago)
        judged(db, running.settings, bob, LONG + disguised_tiled(), 10, 20)
        users.add_user(db, "erin", "student", PASSWORD, "Erin Example",
                       "erin.example@students.example.edu")
        db.commit()
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as running:
        yield running


@pytest.fixture
def as_user(browser: Any, site: Site) -> Iterator[Any]:
    contexts = []

    def open_as(username: str) -> Any:
        context = browser.new_context(timezone_id="Europe/Berlin",
                                      viewport={"width": 1280, "height": 800})
        contexts.append(context)
        page = context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        page.goto(f"{site.url}/login")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url("**/submit")
        return page

    yield open_as
    for context in contexts:
        context.close()


def align(locator: Any) -> str:
    return locator.evaluate("e => getComputedStyle(e).textAlign")


def fits(page: Any) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_text_reads_from_the_left_and_numbers_line_up_on_the_right(as_user, site: Site):
    page = as_user("tara")
    page.goto(f"{site.url}/admin")
    erin = page.locator("#user-table tr[data-user=erin] td")
    erin.first.wait_for()
    assert [align(erin.nth(i)) for i in (0, 1, 2, 5)] == ["left", "left", "left", "right"]
    score = page.locator("#admin-subs tbody tr").first.locator("td").nth(6)
    assert align(score) == "right"
    shoot(page, "admin")
    page = as_user("alice")
    page.goto(f"{site.url}/submissions")
    first = page.locator("table tbody tr").first.locator("td")
    assert [align(first.nth(i)) for i in (1, 2, 6, 7)] == ["left", "left", "right", "right"]
    shoot(page, "mine")
    page.click("table tbody tr:nth-child(2) a")  # a WA submission
    message = page.locator("#tests td.message").last
    assert "values over tolerance" in message.inner_text() and align(message) == "left"
    assert align(page.locator("#tests tbody tr").first.locator("td").nth(3)) == "right"
    shoot(page, "submission-wa")


def test_the_side_by_side_view_fits_a_1280_px_window(as_user, site: Site):
    page = as_user("tara")
    page.goto(f"{site.url}/similarity")
    shoot(page, "similarity")
    page.locator("#pairs a", has_text="side by side").first.click()
    page.wait_for_url("**/similarity/compare?*")
    assert fits(page)
    assert page.locator("nav").bounding_box()["width"] == 1280
    pane = page.locator("#side-1")
    assert pane.evaluate("e => e.scrollWidth > e.clientWidth")  # the long line scrolls inside
    shoot(page, "similarity-pair")


def test_the_roster_picker_has_a_line_of_its_own_and_an_example(as_user, site: Site):
    page = as_user("tara")
    page.goto(f"{site.url}/admin")
    create = page.locator("#create-user button").bounding_box()
    first = page.locator("#create-user input[name=username]").bounding_box()
    label = page.locator("#import-roster label").bounding_box()
    picker = page.locator("#import-roster input[type=file]").bounding_box()
    button = page.locator("#import-roster button").bounding_box()
    assert label["y"] >= create["y"] + create["height"]  # a line of its own below "Create user"
    assert abs(label["x"] - first["x"]) < 2  # starting where the create form starts
    middle = [box["y"] + box["height"] / 2 for box in (label, picker, button)]
    assert max(middle) - min(middle) < 4  # label, picker and Import on one line
    assert "A header row is optional" in page.locator("#roster-format").inner_text()
    example = page.request.get(site.url + page.locator("#roster-example").get_attribute("href"))
    assert example.headers["content-type"].startswith("text/csv")
    rows = users.parse_roster(example.text())
    assert [r["username"] for r in rows] == ["alice", "bob", "tara"]
    assert [r["role"] for r in rows] == ["student", "student", "ta"]
    shoot(page, "admin-users")


def test_a_history_of_one_passing_submission_shows_each_point_and_verdict(as_user, site: Site):
    page = as_user("alice")
    page.goto(f"{site.url}/history")
    points = page.locator("#progress svg rect.own")
    assert [points.nth(i).get_attribute("data-verdict") for i in range(3)] == ["WA", "WA", "AC"]
    assert page.locator("#progress svg text", has_text="submitted (Asia/Taipei)").count() == 1
    shoot(page, "history")


def test_times_show_the_course_zone_and_the_viewers_own(as_user, site: Site):
    with site.db() as db:
        tara = db.get(User, site.accounts["tara"].id)
        due = deadlines.parse_due("2026-12-01T23:59+08:00")
        deadlines.set_deadline(db, tara, site.settings.suite, due, "penalty", 10, 50)
    page = as_user("alice")
    line = page.locator("#deadline").inner_text()
    assert "is due 2026-12-01 23:59 UTC+08:00" in line
    page.goto(f"{site.url}/submissions")
    submitted = page.locator("table tbody tr").first.locator("td").nth(1)
    assert "UTC+08:00" in submitted.inner_text()
    assert "(your time: " in submitted.inner_text()  # Berlin is not Taipei
    page = as_user("tara")
    page.goto(f"{site.url}/admin")
    assert page.locator("#due time").inner_text() == "2026-12-01 23:59 UTC+08:00"
    assert page.locator("#deadline-box input[name=due_at]").first.input_value() == \
        "2026-12-01T23:59"  # the picker's value, in the course's zone its label names
    assert "(your time: 2026-12-01 16:59)" in page.locator("#deadline-box").inner_text()
    shoot(page, "admin-deadline")
    assert datetime.fromisoformat(page.locator("#due time").get_attribute("datetime")
                                  .replace("Z", "+00:00")) == due


def test_every_page_fits_a_phone(as_user, site: Site):
    for user, paths in (("alice", ("/submit", "/submissions", "/submissions/1", "/custom",
                                   "/history", "/scoreboard", "/account")),
                        ("tara", ("/admin", "/similarity", "/similarity/compare?a=s3&b=s4"))):
        page = as_user(user)
        page.set_viewport_size({"width": 390, "height": 800})
        for path in paths:
            assert page.goto(f"{site.url}{path}").ok, path
            page.wait_for_load_state("networkidle")
            assert fits(page), path
            assert sideways(page) == [], f"{path}: a table scrolls sideways on a phone"
            shoot(page, "page-" + re.sub(r"[^a-z0-9]+", "-", path).strip("-"))


def test_rejudge_all_shows_the_new_state_without_a_reload(as_user, site: Site):
    """Last: it sends every submission back to the queue."""
    page = as_user("tara")
    page.goto(f"{site.url}/admin")
    rows = page.locator("#admin-subs tbody tr")
    assert "done" in rows.first.inner_text()
    page.evaluate("window.notReloaded = true")
    page.click("text=Rejudge all")
    page.locator("#rejudge-result span").wait_for()
    page.locator("#admin-subs tbody tr td:nth-child(4)", has_text="queued").first.wait_for()
    statuses = page.locator("#admin-subs tbody tr td:nth-child(4)").all_inner_texts()
    assert set(statuses) == {"queued"} and page.evaluate("window.notReloaded")


def test_the_pages_work_under_their_content_security_policy(as_user, site: Site):
    """Every page of both roles loads with nothing refused by the policy (no inline script, no
    eval), and a button that reloads the page once its request is answered still does."""
    refused: list[str] = []
    tara = as_user("tara")
    alice = as_user("alice")
    for page in (tara, alice):
        page.on("console", lambda message: refused.append(message.text)
                if "Content Security Policy" in message.text else None)
    for path in ("/admin", "/similarity", "/scoreboard", "/audit", "/course", "/history",
                 "/account", "/submissions", "/custom"):
        tara.goto(f"{site.url}{path}")
        tara.wait_for_load_state("networkidle")
    for path in ("/submit", "/scoreboard", "/submissions", "/account", "/course", "/custom"):
        alice.goto(f"{site.url}{path}")
        alice.wait_for_load_state("networkidle")
    alice.goto(f"{site.url}/submissions")
    alice.click("table tbody tr:nth-child(1) a")  # a result page and its live stream
    alice.wait_for_load_state("networkidle")
    tara.goto(f"{site.url}/admin")
    button = tara.locator("button", has_text=re.compile("(Allow|Forbid) students"))
    before = button.inner_text()
    with tara.expect_navigation():
        button.click()
    assert tara.locator("button", has_text=re.compile("(Allow|Forbid) students")).inner_text() \
        != before
    assert refused == []
