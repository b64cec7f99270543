"""The insight pages in the real Chromium, against a served app (uvicorn) and a control worker:
a student's history, the error map of a WA test, the scoreboard's GPU tabs, and the TAs'
similarity list, side by side view and source upload.

The browser is Debian's chromium driven by playwright's Python package (as tests/app/test_served.py
does); without chromium the tests are skipped, saying so.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.models import SimilaritySource, Submission, SubmissionFile, utcnow
from app.similarity import fingerprinting
from app.submissions import recording
from app.wiring import wired_sessions
from flashjudge.contract import FingerprintPayload
from kernels.errormap import error_map_arrays
from kernels.fileformat import InputHeader
from tests.app.test_served import CHROMIUM, free_port
from tests.app.utils.factories import PASSWORD, judged_result, make_user
from tests.app.utils.processes import REPO, settings_env, start_worker, stop, wait_for
from tests.app.utils.similar import COPY, STARTER, TILED

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make test does)")]
RTX, GTX = "NVIDIA GeForce RTX 3070", "NVIDIA GeForce GTX 1080"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@dataclass
class Site:
    """The served app and what is in it."""

    url: str  # base URL
    alice: list[int]  # alice's submissions, oldest first (the second has a WA with a map)
    data: Path  # the data dir (logs)


def judged(db: Session, settings: Settings, user_id: int, text: str, passed: int,
           seconds: float, gpu: str, minutes_ago: int, wa_map: bool = False) -> int:
    sub = Submission(user_id=user_id, language="cuda-program", suite=settings.suite,
                     status="queued", attempt=1, compile_log="", error="",
                     created_at=utcnow() - timedelta(minutes=minutes_ago))
    sub.files = [SubmissionFile(name="hw4.cu", content=text.encode())]
    db.add(sub)
    db.commit()
    result = {**judged_result(passed, seconds), "worker": {"gpu": gpu}}
    if wa_map:
        want = np.zeros((4, 128, 32), np.float32)
        got = want.copy()
        got[:, 96:, :] = 1.0  # the last 32-row tile wrong
        result["tests"][9]["error_map"] = error_map_arrays(
            got, want, InputHeader(4, 128, 32)).to_dict()
    assert recording.record_result(db, settings, sub.id, 1, result)
    fingerprinting.fingerprint(db, FingerprintPayload(submission_id=sub.id))
    return sub.id


def populate(db: Session, settings: Settings) -> list[int]:
    alice, bob = make_user(db, "alice"), make_user(db, "bob")
    make_user(db, "tara", "ta")
    mine = [judged(db, settings, alice.id, TILED, 8, 0.9, RTX, 50),
            judged(db, settings, alice.id, TILED, 9, 0.8, RTX, 40, wa_map=True),
            judged(db, settings, alice.id, TILED, 10, 0.5, RTX, 30)]
    judged(db, settings, bob.id, NAIVE_FREE(COPY), 10, 0.7, RTX, 20)
    judged(db, settings, bob.id, COPY, 10, 0.9, GTX, 10)
    db.add(SimilaritySource(suite=settings.suite, kind="base", name="seq-flashattention.c",
                            content=STARTER))
    db.commit()
    fingerprinting.fingerprint(db, FingerprintPayload(source_id=1))
    return mine


def NAIVE_FREE(text: str) -> str:  # noqa: N802 - reads as what it makes
    """Bob's RTX submission: his copy, a line changed."""
    return text.replace("#include", "// edited\n#include", 1)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    data = tmp_path_factory.mktemp("insight-site")
    settings = Settings(environment="test", secret_key="test-secret-not-for-production",
                        data_dir=data, suite="hw4-mini", submit_interval_s=0,
                        sweep_interval_s=0, migrate_on_start=False)
    upgrade(settings.db_url)
    with wired_sessions(settings.db_url)() as db:
        alice = populate(db, settings)
    control = start_worker(settings, "control", data / "control.log")
    port = free_port()
    env = settings_env(settings, FLASHJUDGE_SWEEP_INTERVAL_S="0",
                       FLASHJUDGE_MIGRATE_ON_START="false")
    with (data / "api.log").open("wb") as log:
        api = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory",
                                "app.main:create_app", "--port", str(port)], env=env, cwd=REPO,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: up(url) or api.poll() is not None, 60, "the API to answer")
        assert api.poll() is None, (data / "api.log").read_text()[-3000:]
        yield Site(url, alice, data)
    finally:
        stop(api)
        stop(control)


def up(url: str) -> bool:
    try:
        return httpx.get(f"{url}/login", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield chromium
        chromium.close()


def logged_in(browser: Any, site: Site, username: str) -> Any:
    page = browser.new_page()
    page.goto(f"{site.url}/login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/submit")
    return page


def test_a_student_compares_two_submissions_and_sees_the_best_so_far(browser, site):
    page = logged_in(browser, site, "alice")
    page.goto(f"{site.url}/submissions")
    page.click("#history-link a")
    page.wait_for_url("**/history")
    assert page.locator("svg.history circle.best").count() == 3  # each one improved
    assert page.locator("tr[data-test=t10].changed").count() == 1  # #2 -> #3: t10 WA -> AC
    first, _, last = site.alice
    page.select_option("select[name=a]", str(first))
    page.click("#compare-form button")
    page.wait_for_url(f"**/history?a={first}&b={last}")
    summary = page.locator("#summary").inner_text()
    assert "passed 8 → 10" in summary and "fixed t09, t10" in summary
    delta = page.locator("tr[data-test=t01] td.delta")
    assert delta.inner_text().startswith("-0.400 s") and "better" in delta.get_attribute("class")


def test_a_wa_test_shows_its_error_map_next_to_it(browser, site):
    page = logged_in(browser, site, "alice")
    page.goto(f"{site.url}/submissions/{site.alice[1]}")
    cell = page.locator("#errmap-t10")
    assert "the last 32-row tile" in cell.locator(".reading").inner_text()
    assert cell.locator("svg").first.is_visible()  # open at once: the first map of the page
    assert not cell.locator("details details svg").is_visible()  # 64-row tiles on demand
    cell.locator("details details summary").click()
    assert cell.locator("details details svg").is_visible()


def test_the_scoreboard_ranks_within_the_chosen_gpu_model(browser, site):
    page = logged_in(browser, site, "alice")
    page.goto(f"{site.url}/scoreboard")
    assert page.locator("#gpu-tabs a.current").inner_text() == RTX  # the most used model
    assert page.locator("tr[data-user]").count() == 2
    page.click(f"#gpu-tabs a[data-model='{GTX}']")
    page.wait_for_url("**/scoreboard?gpu_model=*")
    assert page.locator("#gpu-tabs a.current").inner_text() == GTX
    rows = page.locator("tr[data-user]")
    assert rows.count() == 1 and rows.first.get_attribute("data-user") == "bob"


def test_a_ta_finds_the_copy_sees_it_side_by_side_and_uploads_a_source(browser, site, tmp_path):
    page = logged_in(browser, site, "tara")
    page.click("nav a[href='/similarity']")
    page.wait_for_url("**/similarity")
    top = page.locator("#pairs tbody tr").first
    assert "alice" in top.inner_text() and "bob" in top.inner_text()
    top.locator("a", has_text="side by side").click()
    page.wait_for_url("**/similarity/compare?*")
    for side in ("#side-1", "#side-2"):
        marked = page.locator(f"{side} span[data-passage]")
        assert marked.count() > 20 and marked.first.is_visible()
        assert marked.first.evaluate("e => getComputedStyle(e).backgroundColor") != \
            "rgba(0, 0, 0, 0)"  # highlighted
    upload = tmp_path / "last-year.cu"
    upload.write_text(TILED)
    page.goto(f"{site.url}/similarity")
    page.select_option("#source-form select[name=kind]", "public")
    page.set_input_files("#source-form input[name=file]", str(upload))
    with page.expect_navigation():
        page.click("#source-form button")
    row = page.locator("#sources tr", has_text="last-year.cu")
    assert "public" in row.inner_text()

    def fingerprinted() -> bool:  # by the control worker process, then shown on a reload
        page.reload()
        return "yes" in page.locator("#sources tr", has_text="last-year.cu").inner_text()

    wait_for(fingerprinted, 60, "the uploaded source to be fingerprinted")
    assert page.locator("#pairs tr", has_text="last-year.cu").count() >= 1


def test_the_board_marks_my_row_and_sorts_by_a_clicked_column(browser, site):
    page = logged_in(browser, site, "alice")
    page.goto(f"{site.url}/scoreboard")
    assert page.locator("tr.mine").get_attribute("data-user") == "alice"
    users = page.locator("tr[data-user]")
    header = page.locator("table.board th", has_text="User")
    header.click()
    ascending = [users.nth(i).get_attribute("data-user") for i in range(users.count())]
    header.click()
    descending = [users.nth(i).get_attribute("data-user") for i in range(users.count())]
    assert ascending == sorted(ascending) and descending == ascending[::-1]
    assert len(ascending) == 2
