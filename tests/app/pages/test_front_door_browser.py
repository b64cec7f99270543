"""The first minutes of a new user, in Chromium against a real uvicorn: the sign-in link sets a
password and signs them in (no second typing), its token stays out of the access log, every
page loads without a 404 (the favicon), and Submit with no file says which file to choose."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from app.accounts import signin_links, users
from tests.app.utils.factories import PASSWORD, live_worker
from tests.app.utils.served_site import Site, chromium, log_in, needs_chromium, served, shoot

pytestmark = [pytest.mark.slow, needs_chromium]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with served(tmp_path_factory.mktemp("front-door")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as running:
        yield running


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    yield context.new_page()
    context.close()


def access_lines(site: Site) -> list[str]:
    """uvicorn's access lines as the server logged them (JSON lines, app/logging_setup.py)."""
    lines = (json.loads(line) for line in site.log.read_text().splitlines()
             if line.startswith("{"))
    return [line["msg"] for line in lines if line.get("logger") == "uvicorn.access"]


def invite(site: Site, username: str) -> str:
    with site.db() as db:
        user = users.add_user(db, username, "student", None)
        link = signin_links.create(db, user, signin_links.INVITE, 3600)
        db.commit()
    return link.token


def test_setting_a_password_signs_in_and_the_token_stays_out_of_the_log(page: Any, site: Site):
    token = invite(site, "newbie")
    page.goto(f"{site.url}/set-password?token={token}")
    shoot(page, "set-password")
    page.fill("input[name=password]", PASSWORD)
    page.fill("input[name=confirm]", PASSWORD)
    page.click("#set-password-form button")
    page.wait_for_url("**/submit")
    assert page.locator("nav .who").inner_text() == "newbie (student)"
    assert "Your password is set, newbie: you are signed in" in page.locator("#flash").inner_text()
    shoot(page, "submit-after-set-password")
    page.reload()
    assert page.locator("#flash").count() == 0  # said once
    assert token not in site.log.read_text()
    opened = [line for line in access_lines(site) if "/set-password" in line]
    assert any(re.search(r'"GET /set-password\?token=\[redacted\] HTTP/1\.1" 200$', line)
               for line in opened), opened


def test_pages_load_without_a_missing_file(page: Any, site: Site):
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
    log_in(page, site, "alice")
    for path in ("/submit", "/submissions", "/scoreboard", "/custom", "/account", "/history"):
        page.goto(f"{site.url}{path}")
    assert page.evaluate("document.querySelector('link[rel=icon]').href").endswith(".svg")
    icon = page.goto(f"{site.url}/favicon.ico")  # asked for by browsers whatever is linked
    assert icon.headers["content-type"] == "image/x-icon"
    assert missing == []


def test_submit_with_no_file_names_the_file_to_choose(page: Any, site: Site):
    with site.db() as db:
        live_worker(db)  # c-program only: hw4.c is the file
    log_in(page, site, "alice")
    page.click("#submit-form button[type=submit]")
    error = page.locator("#submit-error")
    error.filter(has_text="choose").wait_for()
    assert error.inner_text() == "choose your hw4.c (or drop it here)"
    shoot(page, "submit-no-file")


def test_a_cpu_only_deployment_alarms_a_student_only_for_a_language_it_cannot_judge(
        page: Any, site: Site):
    with site.db() as db:
        live_worker(db)  # no GPU worker
    log_in(page, site, "alice")
    alarm, button = page.locator("#capacity"), page.locator("#submit-form button[type=submit]")
    assert not alarm.is_visible() and button.is_enabled()
    assert page.locator("select[name=language] > option").all_inner_texts() == ["c-program"]
    page.select_option("select[name=language]", "cuda-program")
    assert alarm.is_visible() and button.is_disabled()
    assert alarm.inner_text().startswith("no GPU worker is connected: cuda-program cannot be "
                                         "judged now (languages that can be judged now: c-program)")
    shoot(page, "submit-cpu-only-picked-cuda")
    page.select_option("select[name=language]", "c-program")
    assert not alarm.is_visible() and button.is_enabled()
    log_in(page, site, "tara")
    assert page.locator("#capacity").inner_text().startswith("no GPU worker is connected")
