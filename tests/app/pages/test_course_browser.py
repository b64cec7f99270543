"""The pages in Debian's Chromium against a real server (uvicorn, SQLite, embedded broker):
logging in returns to where one was, the submit box names the chosen language's file, and the TA
page's actions say what they did at once (rejudge, cancel, a refusal's reason)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import delete
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.models import WorkerStatus
from app.db.session import get_engine
from app.results import overview
from app.submissions import recording
from app.wiring import wired_sessions
from tests.app.test_served import CHROMIUM, free_port
from tests.app.utils.factories import (
    PASSWORD,
    Account,
    judged_result,
    live_worker,
    make_submission,
    make_user,
)
from tests.app.utils.processes import REPO, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make test does)")]
SECRET = "browser-tests-secret-not-for-production"
GPU = ("cuda-program", "cuda-kernel")


@dataclass
class Site:
    """A running service and its database."""

    url: str  # base URL
    settings: Settings  # the same data dir and database as the server
    accounts: dict[str, Account]  # alice, bob, dave (students) and tara (TA)

    def db(self) -> Session:
        return wired_sessions(self.settings.db_url)()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    data = tmp_path_factory.mktemp("browser")
    settings = Settings(environment="test", secret_key=SECRET, data_dir=data, suite="hw4-mini",
                        submit_interval_s=0, sweep_interval_s=0)
    upgrade(settings.db_url)
    with wired_sessions(settings.db_url)() as db:
        accounts = {name: make_user(db, name, role) for name, role in (
            ("alice", "student"), ("bob", "student"), ("dave", "student"), ("tara", "ta"))}
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLASHJUDGE_")}
    env.update(FLASHJUDGE_DATA_DIR=str(data), FLASHJUDGE_SUITE="hw4-mini",
               FLASHJUDGE_ENVIRONMENT="test", FLASHJUDGE_SECRET_KEY=SECRET,
               FLASHJUDGE_SUBMIT_INTERVAL_S="0", FLASHJUDGE_SWEEP_INTERVAL_S="0",
               PYTHONPATH=str(REPO))
    url = f"http://127.0.0.1:{(port := free_port())}"
    with (data / "server.log").open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory",
                                 "app.main:create_app", "--port", str(port)],
                                env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
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


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    args = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=args, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    tab = context.new_page()
    tab.on("dialog", lambda dialog: dialog.accept())  # hx-confirm: yes
    yield tab
    context.close()


def log_in(page: Any, site: Site, username: str) -> None:
    page.goto(f"{site.url}/login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/submit")


def test_logging_in_from_the_scoreboard_returns_to_it(page: Any, site: Site):
    page.goto(f"{site.url}/scoreboard")
    page.wait_for_url("**/login?**")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/scoreboard")
    assert page.locator("h1").inner_text() == "Scoreboard"


def test_the_drop_box_names_the_chosen_languages_file(page: Any, site: Site):
    with site.db() as db:
        live_worker(db)
        live_worker(db, "gpu0@node", GPU, gpu="NVIDIA H100")
    log_in(page, site, "alice")
    drop = page.locator("#drop")
    assert drop.inner_text().startswith("Drop hw4.cu (and a Makefile) here")
    page.select_option("select[name=language]", "c-program")
    assert drop.inner_text().startswith("Drop hw4.c (and a Makefile) here")
    page.select_option("select[name=language]", "cuda-kernel")
    assert drop.inner_text().startswith("Drop solve.cu here")


def test_rejudge_all_says_what_it_does_at_once(page: Any, site: Site):
    with site.db() as db:
        for _ in range(2):
            sub = make_submission(db, site.accounts["bob"])
            recording.record_result(db, site.settings, sub.id, 1, judged_result(4, 0.2))
        expected = sum(1 for s in overview.all_submissions(db) if s["verdict"] not in (
            "SUPERSEDED", "CANCELLED"))
    log_in(page, site, "tara")
    page.goto(f"{site.url}/admin")
    page.click("text=Rejudge all")
    result = page.locator("#rejudge-result")
    result.locator("span").wait_for()
    assert re.match(rf"rejudging {expected} submission\(s\)", result.inner_text())


def test_a_ta_cancels_cuda_work_no_gpu_worker_will_take(page: Any, site: Site):
    with site.db() as db:
        db.execute(delete(WorkerStatus).where(WorkerStatus.gpu != "cpu"))  # the GPU worker left
        make_submission(db, site.accounts["dave"], language="cuda-kernel")
    log_in(page, site, "tara")
    page.goto(f"{site.url}/admin")
    banner = page.locator("#stranded-cuda-kernel")
    assert "queued cuda-kernel submission(s) wait: no GPU worker is connected" in \
        banner.inner_text()
    page.click("text=Cancel all queued cuda-kernel")
    page.locator("#stranded-cuda-kernel span.ok").wait_for()
    assert re.fullmatch(r"cancelled \d+ queued cuda-kernel submission\(s\)",
                        banner.inner_text().strip())


def test_a_refused_ta_action_shows_its_reason(page: Any, site: Site):
    log_in(page, site, "tara")
    page.goto(f"{site.url}/admin")
    page.fill("#deadline-box input[name=due_at]", "2026-12-01T23:59")  # the picker's value
    page.click("text=Save deadline")
    page.locator("#deadline-box", has_text="deadline saved").wait_for()
    extension = page.locator("#deadline-box form").nth(1)
    extension.locator("input[name=username]").fill("alice")
    extension.locator("input[name=due_at]").fill("2026-11-30T12:00")  # before the due time
    extension.locator("button").click()
    error = page.locator("#deadline-box .error")
    error.wait_for()
    assert "an extension must end after" in error.inner_text()
