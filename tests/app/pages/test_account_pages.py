"""Account pages: the TA's user section, my tokens and password; and in Chromium, a roster-imported
student who opens the link, sets a password, logs in and submits (and the link works once)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

import pytest
from sqlalchemy import func, select

from app.db.models import Submission
from flashjudge.contract import MAX_FILE_BYTES
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.live_server import live_server

CHROMIUM = "/usr/bin/chromium"
ROSTER = "username,display name,email,role\ns1,Student One,s1@x.edu,student\n"
PASSWORD = "student one passphrase"


def csrf_of(page: str) -> str:
    return page.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]


def test_the_ta_section_imports_a_roster_and_shows_the_links_once(client, ta):
    login(client, ta)
    section = client.get("/admin/users", headers=HTML).text
    assert 'id="user-table"' in section and 'data-user="tara"' in section
    csrf = csrf_of(client.get("/admin", headers=HTML).text)
    done = client.post("/admin/users/import", files={"roster": ("r.csv", ROSTER.encode())},
                       headers={"X-CSRF-Token": csrf, **HTML}).text
    assert "1 created, 0 updated" in done and 'tr data-user="s1"' in done
    csv_url = done.split('id="links-csv" href="')[1].split('"')[0]
    assert unquote(csv_url).startswith("data:text/csv;charset=utf-8,username,email,link")
    assert "link only" in done  # s1 cannot log in until the link is used
    assert "/set-password?token=" not in client.get("/admin/users", headers=HTML).text


def test_the_roster_example_is_a_file_the_import_takes_as_it_is(client, db, ta, student):
    login(client, student)
    assert client.get("/admin/users/roster-example.csv", headers=HTML).status_code == 403
    login(client, ta)
    example = client.get("/admin/users/roster-example.csv")
    assert example.headers["content-type"] == "text/csv; charset=utf-8"
    assert "attachment" in example.headers["content-disposition"]
    assert example.text.splitlines()[0] == "username,display name,email,role"  # a header
    csrf = csrf_of(client.get("/admin", headers=HTML).text)
    done = client.post("/admin/users/import", files={"roster": ("r.csv", example.content)},
                       headers={"X-CSRF-Token": csrf, **HTML}).text
    assert "Imported: 1 created, 2 updated." in done  # alice and tara were there already
    assert "A header row is optional" in done and 'href="/admin/users/roster-example.csv"' in done


def test_my_account_lists_my_tokens_and_makes_one_shown_once(client, student):
    login(client, student)
    page = client.get("/account", headers=HTML).text
    assert "API tokens" in page and "<td>test</td>" in page
    csrf = csrf_of(page)
    made = client.post("/account/tokens", data={"name": "laptop"},
                       headers={"X-CSRF-Token": csrf, **HTML}).text
    assert 'id="new-token"' in made and "fj_" in made and "<td>laptop</td>" in made


@pytest.fixture
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    args = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=args, headless=True)
        yield chromium
        chromium.close()


def log_in(page, url: str, username: str, password: str) -> None:
    page.goto(f"{url}/login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url("**/submit")


@pytest.mark.slow
def test_a_roster_student_opens_the_link_sets_a_password_logs_in_and_submits(
        settings, db, ta, browser, tmp_path, sources):
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER)
    with live_server(settings) as url:
        tara = browser.new_page()
        log_in(tara, url, "tara", ta.password)
        tara.goto(f"{url}/admin")
        tara.set_input_files("#import-roster input[name=roster]", str(roster))
        tara.click("#import-roster button")
        link = tara.locator("#links tr[data-user=s1] code.link").inner_text()

        student = browser.new_context().new_page()
        student.goto(link)
        assert student.locator("#link-user").inner_text() == "s1"
        student.fill("input[name=password]", PASSWORD)
        student.fill("input[name=confirm]", PASSWORD)
        student.click("#set-password-form button")
        student.wait_for_url("**/submit")  # signed in: no second typing of the password
        assert student.locator("nav .who").inner_text() == "s1 (student)"
        student.select_option("select[name=language]", "c-program")
        student.set_input_files("#files", str(sources / "seq_attention.c"))
        student.click("#submit-form button[type=submit]")
        student.wait_for_url("**/submissions/*")
        student.click("nav form[action='/logout'] button")  # its token rides in the form
        student.wait_for_url("**/login")

        student.goto(link)
        assert "already used" in student.locator("#link-error").inner_text()
    assert db.scalar(select(func.count()).select_from(Submission)) == 1


@pytest.mark.slow
def test_the_submit_page_refuses_a_too_large_file_before_sending(settings, db, student,
                                                                 browser, tmp_path):
    big = tmp_path / "hw4.c"
    big.write_bytes(b"/*" + b"x" * (MAX_FILE_BYTES + 10) + b"*/\n")
    with live_server(settings) as url:
        page = browser.new_page()
        posts: list[str] = []
        page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
        log_in(page, url, "alice", student.password)
        page.select_option("select[name=language]", "c-program")
        page.set_input_files("#files", str(big))
        page.click("#submit-form button[type=submit]")
        error = page.locator("#submit-error")
        error.filter(has_text="at most").wait_for()
        assert f"at most {MAX_FILE_BYTES} bytes" in error.inner_text()
        assert not [p for p in posts if p.endswith("/api/submissions")]
    assert db.scalar(select(func.count()).select_from(Submission)) == 0
