"""The scoreboard in Chromium follows pushed changes: a new result appears without a reload, the
refetch sends the page's ETag, a change that left this board alone swaps nothing (304), and a
column the viewer sorted by stays sorted.

Served by a real uvicorn (SQLite, embedded broker) whose poller turns the change feed into
`scoreboard` events (GET /api/scoreboard/events); results are recorded by the control side's own
function in this process, as a control worker would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.session import get_engine
from app.submissions import recording
from app.wiring import wired_sessions
from tests.app.test_served import CHROMIUM, free_port
from tests.app.utils.factories import PASSWORD, Account, judged_result, make_submission, make_user
from tests.app.utils.processes import REPO, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make test does)")]
SECRET = "board-browser-secret-not-for-production"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@dataclass
class Site:
    url: str
    settings: Settings
    accounts: dict[str, Account]

    def judged(self, name: str, passed: int, seconds: float) -> None:
        with wired_sessions(self.settings.db_url)() as db:
            sub = make_submission(db, self.accounts[name])
            recording.record_result(db, self.settings, sub.id, 1, judged_result(passed, seconds))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    data = tmp_path_factory.mktemp("board-browser")
    settings = Settings(environment="test", secret_key=SECRET, data_dir=data, suite="hw4-mini",
                        submit_interval_s=0, sweep_interval_s=0, refine_timing=False)
    upgrade(settings.db_url)
    with wired_sessions(settings.db_url)() as db:
        accounts = {n: make_user(db, n, r) for n, r in (("alice", "student"), ("bob", "student"),
                                                        ("carol", "student"), ("tara", "ta"))}
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLASHJUDGE_")}
    env.update(FLASHJUDGE_DATA_DIR=str(data), FLASHJUDGE_SUITE="hw4-mini",
               FLASHJUDGE_ENVIRONMENT="test", FLASHJUDGE_SECRET_KEY=SECRET,
               FLASHJUDGE_SWEEP_INTERVAL_S="0", FLASHJUDGE_REFINE_TIMING="0",
               FLASHJUDGE_LIVE_BOARD_EVERY_S="0",
               PYTHONPATH=str(REPO))
    url = f"http://127.0.0.1:{(port := free_port())}"
    with (data / "server.log").open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory",
                                 "app.main:create_app", "--port",
                                 str(port)], env=env, cwd=REPO, stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: proc.poll() is not None or answers(f"{url}/login"), 60, "the server")
        assert proc.poll() is None, (data / "server.log").read_text()[-3000:]
        yield Site(url, settings, accounts)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        get_engine(settings.db_url).dispose()


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture
def page(site: Site) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        tab = browser.new_context().new_page()
        tab.goto(f"{site.url}/login")
        tab.fill("input[name=username]", "alice")
        tab.fill("input[name=password]", PASSWORD)
        tab.click("button[type=submit]")
        tab.wait_for_url("**/submit")
        yield tab
        browser.close()


def users(page: Any) -> list[str]:
    return page.locator("tr[data-user]").evaluate_all("rows => rows.map(r => r.dataset.user)")


def refetch(response: Any) -> bool:
    return "/partials/scoreboard" in response.url


def test_a_new_result_appears_without_a_reload_and_sorting_stays(page: Any, site: Site):
    site.judged("alice", 8, 0.5)
    with page.expect_response(refetch, timeout=30000) as checked:  # the stream's first event
        page.goto(f"{site.url}/scoreboard")
    etag = page.locator("#board").get_attribute("data-etag")
    assert checked.value.request.headers.get("if-none-match") == etag
    assert checked.value.status == 304  # the page was current: nothing sent, nothing swapped
    assert users(page) == ["alice"] and page.locator("tr.mine").count() == 1
    page.click("table.board th:text('User')")  # sorted by user, then descending
    page.click("table.board th:text('User')")
    with page.expect_response(lambda r: refetch(r) and r.status == 200, timeout=30000):
        site.judged("bob", 10, 0.25)  # bob goes first by rank
    page.locator('tr[data-user="bob"]').wait_for()
    assert users(page) == ["bob", "alice"]  # sorted by user, descending, as the viewer chose
    assert page.locator("tr.mine").get_attribute("data-user") == "alice"
    assert page.locator("#board").get_attribute("data-etag") != etag
    # a TA's result on a new GPU model moves the version (the list of models), no row of this
    # board: the page checks, gets a 304, swaps nothing
    with (page.expect_response(refetch, timeout=30000) as checked,
          wired_sessions(site.settings.db_url)() as db):
        sub = make_submission(db, site.accounts["tara"])
        recording.record_result(db, site.settings, sub.id, 1,
                                {**judged_result(10, 0.1), "worker": {"gpu": "NVIDIA A2"}})
    assert checked.value.status == 304 and users(page) == ["bob", "alice"]
