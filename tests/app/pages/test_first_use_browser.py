"""What a TA and a student met on their first use, in Chromium against a real uvicorn, at
1280 px and at 390 px (a phone): results an assignment hides show no made-up time, archived
terms have board pages, times are the course's, tables fit a phone, downloads are named.

FLASHJUDGE_SHOTS=/some/dir keeps screenshots of each (tests/app/utils/served_site.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.course import assignment_config
from app.submissions import recording
from kernels.mistakes.match import Mistake
from tests.app.utils.factories import judged_result, make_submission
from tests.app.utils.served_site import (
    Site,
    chromium,
    log_in,
    needs_chromium,
    served,
    shoot,
    sideways,
)

pytestmark = [pytest.mark.slow, needs_chromium]
NO_SCALE = Mistake("no_scale", "your output equals attention without the 1/sqrt(d) scale (max "
                   "diff 2e-05 on batches 0-3)", 2e-5, 2.8, "batches 0-3").to_dict()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with served(tmp_path_factory.mktemp("first-use"),
                FLASHJUDGE_COURSE_TIMEZONE="Asia/Taipei") as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as running:
        yield running


def new_page(browser: Any) -> Any:
    return browser.new_context().new_page()


def test_a_result_shown_as_verdicts_only_shows_no_time(browser: Any, site: Site):
    with site.db() as db:
        config = assignment_config.Config(name="hw4-mini", suite="hw4-mini",
                                          visibility="verdicts", due_at="2099-01-01T00:00Z")
        assignment_config.apply(db, None, config, "hw4-mini")
        sub = make_submission(db, site.accounts["alice"], status="running")
        recording.record_result(db, site.settings, sub.id, sub.attempt,
                                judged_result(2, 0.25, 3))
        sub_id = sub.id
    page = new_page(browser)
    log_in(page, site, "alice")
    page.goto(f"{site.url}/submissions/{sub_id}")
    status = page.locator("p.status").inner_text()
    assert "verdict WA" in status and "passed 2" in status
    assert "time" not in status and "refined times follow" not in status
    shoot(page, "hidden-verdicts-result")
    page.context.close()


def test_a_ta_renames_the_first_term_and_reads_its_board_after_archiving(browser: Any,
                                                                          site: Site):
    page = new_page(browser)
    log_in(page, site, "tara")
    page.goto(f"{site.url}/admin/course")
    row = page.locator("#terms tbody tr").first
    row.locator("input[name=name]").fill("2026-fall")
    row.locator("button").click()
    page.locator("#course-box", has_text="term current is now 2026-fall").wait_for()
    page.once("dialog", lambda dialog: dialog.accept())
    page.fill("input[placeholder=\"2027-spring\"]", "2027-spring")
    page.get_by_role("button", name="Start it with these assignments").click()
    page.locator("#course-box", has_text="term 2027-spring started").wait_for()
    shoot(page, "course-terms")
    page.locator("#terms").get_by_role("link", name="its boards").click()
    page.wait_for_url("**/scoreboard?term=2026-fall")
    assert "Term 2026-fall is archived" in page.locator("#archived-term").inner_text()
    assert page.locator("#board table tbody tr").count() == 1  # alice's result of that term
    shoot(page, "archived-board")
    page.locator("#term-tabs").get_by_role("link", name="2027-spring").click()
    page.wait_for_url(f"{site.url}/scoreboard")
    assert page.locator("#archived-term").count() == 0
    page.context.close()


def test_due_times_are_picked_and_shown_in_the_course_zone(browser: Any, site: Site):
    page = new_page(browser)
    log_in(page, site, "tara")
    page.goto(f"{site.url}/admin/course")
    assert page.locator("details:has-text('New assignment') input[name=suite]").input_value() \
        == "hw4-mini"  # what this machine judges, not hw4 (it needs a GPU)
    page.locator("summary", has_text="Change hw4-mini").click()
    picker = page.locator("#assignments input[name=due_at]").first
    assert picker.get_attribute("type") == "datetime-local"
    assert "Asia/Taipei, UTC+08:00" in page.locator("#assignments label",
                                                   has_text="Due").first.inner_text()
    picker.fill("2026-12-05T23:59")
    page.locator("#assignments button", has_text="Save").first.click()
    page.locator("#course-box", has_text="hw4-mini saved").wait_for()
    due = page.locator("#assignments tbody tr").first.locator("td").nth(3).inner_text()
    assert due.startswith("2026-12-05 23:59 UTC+08:00")  # it read 2026-12-05T15:59:00Z
    page.locator("summary", has_text="Change hw4-mini").click()
    assert page.locator("#assignments input[name=due_at]").first.input_value() \
        == "2026-12-05T23:59"
    shoot(page, "course-due")
    page.goto(f"{site.url}/admin")
    deadline = page.locator("#deadline-box input[name=due_at]").first
    assert deadline.get_attribute("type") == "datetime-local"
    assert deadline.input_value() == "2026-12-05T23:59"
    assert page.locator("#due").inner_text().startswith("2026-12-05 23:59 UTC+08:00")
    shoot(page, "ta-deadline")
    page.context.close()


def test_a_failed_login_keeps_the_username(browser: Any, site: Site):
    page = new_page(browser)
    page.goto(f"{site.url}/login")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "not-her-password")
    page.click("button[type=submit]")
    page.locator("input[name=password]").wait_for()
    assert page.input_value("input[name=username]") == "alice"  # it was cleared
    assert page.evaluate("document.activeElement.name") == "password"
    shoot(page, "login-failed")
    page.context.close()


def test_the_upload_box_names_what_each_language_takes(browser: Any, site: Site):
    page = new_page(browser)
    log_in(page, site, "alice")
    labels = {}
    for language in ("triton-kernel", "cuda-kernel", "c-program", "cuda-program"):
        page.select_option("select[name=language]", language)
        labels[language] = page.inner_text("#drop-label")
    assert labels == {"triton-kernel": "Drop solve.py", "cuda-kernel": "Drop solve.cu",
                      "c-program": "Drop hw4.c (and a Makefile)",
                      "cuda-program": "Drop hw4.cu (and a Makefile)"}
    page.select_option("select[name=language]", "triton-kernel")
    shoot(page, "submit-triton")
    page.context.close()


def phone_fits(page: Any, url: str, name: str) -> None:
    assert page.goto(url).status == 200, url
    page.wait_for_load_state("networkidle")
    assert sideways(page) == [], f"{url} scrolls sideways on a phone"
    shoot(page, name)


def test_every_page_reads_on_a_phone_without_scrolling_sideways(browser: Any, site: Site):
    """The mistake line, My submissions' verdict and score, the audit log sat off-screen in
    tables that scrolled sideways; the time chart was cut after t06."""
    with site.db() as db:
        config = assignment_config.Config(name="hw4-mini", suite="hw4-mini", visibility="all")
        assignment_config.apply(db, None, config, "hw4-mini")
        result = judged_result(9, 0.41)
        result["tests"][9]["mistake"] = NO_SCALE
        subs = []
        for _ in range(2):
            sub = make_submission(db, site.accounts["alice"], status="running")
            recording.record_result(db, site.settings, sub.id, sub.attempt, result)
            subs.append(sub.id)
    student = new_page(browser)
    log_in(student, site, "alice")
    phone_fits(student, f"{site.url}/submissions/{subs[0]}", "phone-result")
    student.set_viewport_size({"width": 390, "height": 800})
    mistake = student.locator("#mistake-t10")
    assert mistake.is_visible() and mistake.bounding_box()["x"] + \
        mistake.bounding_box()["width"] <= 390  # on screen, not in a sideways table
    chart = student.locator("svg.chart")
    assert chart.bounding_box()["width"] <= 390 and chart.get_attribute("viewBox")
    student.set_viewport_size({"width": 1280, "height": 800})
    phone_fits(student, f"{site.url}/submissions", "phone-mine")
    phone_fits(student, f"{site.url}/history", "phone-history")
    phone_fits(student, f"{site.url}/scoreboard", "phone-board")
    ta = new_page(browser)
    log_in(ta, site, "tara")
    for path, name in (("/admin/audit", "phone-audit"), ("/admin/course", "phone-course"),
                       ("/admin", "phone-admin"), ("/scoreboard", "phone-ta-board")):
        phone_fits(ta, f"{site.url}{path}", name)
    student.context.close()
    ta.context.close()


def test_a_ta_changes_the_time_zone_on_the_course_settings_page(browser: Any, site: Site):
    """The zone and the sign-in were environment variables: changing one meant a restart."""
    page = new_page(browser)
    log_in(page, site, "tara")
    page.goto(f"{site.url}/admin/course")
    page.click("#settings-link")
    page.wait_for_url("**/admin/course/settings")
    zone = page.locator("input[name=timezone]")
    assert zone.input_value() == "Asia/Taipei"  # the environment's first value
    zone.fill("America/New_York")
    page.get_by_role("button", name="Save course settings").click()
    page.locator("#settings-box", has_text="course settings saved").wait_for()
    shoot(page, "course-settings")
    assert sideways(page) == []
    page.goto(f"{site.url}/admin")
    assert "America/New_York, UTC-05:00" in page.locator("#deadline-box").inner_text()
    page.goto(f"{site.url}/admin/course/settings")
    assert page.locator("input[name=timezone]").input_value() == "America/New_York"
    page.context.close()
