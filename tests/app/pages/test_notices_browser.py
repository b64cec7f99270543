"""Announcements in Chromium against a real uvicorn: a TA posts an announcement from the TA page and
every student page shows it at the top until the student hides it; the audit page narrows the
log with its filters; the login page offers the university's sign-in beside the password.

FLASHJUDGE_SHOTS=/some/dir keeps screenshots of each (tests/app/utils/served_site.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.app.utils.served_site import Site, chromium, log_in, needs_chromium, served, shoot

pytestmark = [pytest.mark.slow, needs_chromium]
UNIVERSITY = {"FLASHJUDGE_OIDC_ISSUER": "https://login.example.edu",  # never asked: the page
              "FLASHJUDGE_OIDC_CLIENT_ID": "flashjudge",  # only links to it
              "FLASHJUDGE_OIDC_CLIENT_SECRET": "not-used-here",
              "FLASHJUDGE_OIDC_NAME": "NTU account"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with served(tmp_path_factory.mktemp("notices"), **UNIVERSITY) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as running:
        yield running


def new_page(browser: Any) -> Any:
    return browser.new_context().new_page()


def test_the_login_page_offers_the_university_beside_the_password(browser: Any, site: Site):
    page = new_page(browser)
    page.goto(f"{site.url}/login?next=/scoreboard")
    link = page.locator("#oidc-signin")
    assert link.inner_text() == "Sign in with NTU account"
    assert link.get_attribute("href") == "/login/oidc?next=/scoreboard"
    shoot(page, "login-oidc")
    log_in(page, site, "alice")  # the password still works
    page.context.close()


def test_an_announcement_reaches_every_student_page_until_hidden(browser: Any, site: Site):
    ta = new_page(browser)
    log_in(ta, site, "tara")
    ta.goto(f"{site.url}/admin")
    form = ta.locator("#announce-form")
    form.locator("input[name=title]").fill("Deadline moved to Friday")
    form.locator("textarea[name=body]").fill(
        "The judge is busy tonight: hw4 is now due Friday 23:59.\n"
        "Questions: https://forum.example.edu/hw4")
    form.locator("input[name=expires_at]").fill("2099-12-31T23:59")
    form.locator("button").click()
    ta.locator("#announcements-section .ok").wait_for()
    assert "posted: Deadline moved to Friday" in ta.locator("#announcements-section").inner_text()
    shoot(ta, "admin-announcements")
    ta.context.close()

    student = new_page(browser)
    log_in(student, site, "alice")
    for path in ("/submit", "/submissions", "/scoreboard", "/account"):
        student.goto(f"{site.url}{path}")
        banner = student.locator("#announcements .announcement")
        assert banner.count() == 1, path
        assert "Deadline moved to Friday" in banner.inner_text()
    link = student.locator("#announcements a")
    assert link.get_attribute("href") == "https://forum.example.edu/hw4"
    shoot(student, "announcement-banner")
    student.locator("#announcements button.dismiss").click()
    student.locator("#announcements .announcement").wait_for(state="detached")
    student.reload()
    assert student.locator("#announcements").count() == 0  # hidden for good, for alice
    student.context.close()

    other = new_page(browser)
    log_in(other, site, "bob")
    assert other.locator("#announcements .announcement").count() == 1  # bob still sees it
    other.context.close()


def test_the_audit_page_narrows_the_log_with_its_filters(browser: Any, site: Site):
    ta = new_page(browser)
    log_in(ta, site, "tara")
    ta.goto(f"{site.url}/admin")
    ta.locator("#announce-form input[name=title]").fill("Lab closed Tuesday")
    ta.locator("#announce-form button").click()
    ta.locator("#announcements-section .ok").wait_for()
    ta.locator("nav a[href='/admin/audit']").click()
    ta.wait_for_url("**/admin/audit")
    ta.select_option("#audit-filters select[name=action]", "announce")
    ta.fill("#audit-filters input[name=target]", "announcement")
    ta.locator("#audit-filters button").click()
    ta.wait_for_url("**action=announce**")
    rows = ta.locator("#audit tbody tr")
    assert rows.count() >= 1
    assert all(rows.nth(i).locator("td").nth(2).inner_text() == "announce"
               for i in range(rows.count()))
    assert "Lab closed Tuesday" in ta.locator("#audit").inner_text()
    shoot(ta, "audit-filtered")
    ta.select_option("#audit-filters select[name=actor]", "-")
    ta.locator("#audit-filters button").click()
    ta.wait_for_url("**actor=-**")
    assert "No row matches." in ta.locator("#audit").inner_text()
    ta.context.close()
