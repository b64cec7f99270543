"""Every page renders for the right people; errors are short HTML pages, never tracebacks."""

from __future__ import annotations

import pytest

from app.submissions import recording
from tests.app.utils.factories import judged_result, make_submission

HTML = {"Accept": "text/html"}


def login(client, account) -> None:
    response = client.post("/login", data={"username": account.username,
                                           "password": account.password},
                           follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/submit"


def test_pages_redirect_to_login_when_logged_out(client):
    for path in ("/", "/submit", "/submissions", "/scoreboard", "/custom", "/admin"):
        response = client.get(path, headers=HTML, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"].startswith(
            "/login"), path


def test_a_wrong_password_shows_the_login_page_again(client, student):
    response = client.post("/login", data={"username": "alice", "password": "nope"})
    assert response.status_code == 200 and "wrong username or password" in response.text


@pytest.mark.parametrize("path,text", [
    ("/submit", "Drop hw4.cu"), ("/submissions", "My submissions"),
    ("/scoreboard", "No judged submissions yet"), ("/custom", "Custom run")])
def test_student_pages_render(client, student, path, text):
    login(client, student)
    response = client.get(path, headers=HTML)
    assert response.status_code == 200 and text in response.text


def test_submission_page_shows_tests_chart_and_compile_log(client, db, settings, student):
    sub = make_submission(db, student)
    result = judged_result(9, 0.5)
    result["compile"]["log"] = "hw4.c:3: warning: unused variable"
    recording.record_result(db, settings, sub.id, 1, result)
    login(client, student)
    page = client.get(f"/submissions/{sub.id}", headers=HTML).text
    assert 'id="verdict" class="wa"' in page
    assert page.count('<rect class="bar') == 10
    assert "unused variable" in page
    assert 'data-live="no"' in page


def test_scoreboard_page_colours_cells_and_shows_the_frozen_banner(client, db, settings,
                                                                   student, ta):
    sub = make_submission(db, student)
    recording.record_result(db, settings, sub.id, 1, judged_result(9, 0.5))
    client.post("/api/admin/scoreboard/freeze", headers=ta.headers)
    login(client, student)
    page = client.get("/partials/scoreboard", headers=HTML).text
    assert "The scoreboard is frozen" in page
    assert 'data-user="alice"' in page
    assert page.count('class="ac"') == 9 and page.count('class="wa"') == 1


def test_admin_page_is_for_tas_only(client, student, ta):
    login(client, student)
    refused = client.get("/admin", headers=HTML)
    assert refused.status_code == 403 and "only TAs" in refused.text
    assert "Traceback" not in refused.text
    login(client, ta)
    page = client.get("/admin", headers=HTML)
    assert page.status_code == 200 and "No worker has reported" in page.text


def test_someone_elses_submission_page_is_not_found(client, db, student, other_student):
    sub = make_submission(db, other_student)
    login(client, student)
    response = client.get(f"/submissions/{sub.id}", headers=HTML)
    assert response.status_code == 404 and "no such submission" in response.text
