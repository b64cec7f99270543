"""The course settings page: a TA changes the time zone, the submit interval, a new deadline's
late policy and the university's sign-in while the service runs, each checked by field, audited
(never the secret), and used at once without a restart (they only lived in the environment)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.core.config import Settings
from app.course import course_settings
from tests.app.pages.test_course_pages import csrf_of
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import live_worker

C = ("hw4.c", b"int main(void) { return 0; }\n")
FORM = {"timezone": "Asia/Taipei", "submit_interval_s": "3600", "late_policy": "penalty",
        "penalty_per_day": "5", "penalty_cap": "40", "oidc_issuer": "https://login.example.edu",
        "oidc_client_id": "judge", "oidc_client_secret": "s3cret-value", "oidc_name": "NTU"}


@pytest.fixture
def restored(settings: Settings) -> Iterator[Settings]:
    """The shared test settings as they were: a save changes the running service's copy."""
    before = {k: getattr(settings, v) for k, v in course_settings.ON_SETTINGS.items()}
    yield settings
    for field, value in before.items():
        object.__setattr__(settings, course_settings.ON_SETTINGS[field], value)


def test_a_ta_changes_the_course_settings_and_they_apply_at_once(client, db, restored, student,
                                                                 ta):
    settings = restored
    assert client.get("/admin/course/settings", headers=HTML | student.headers).status_code \
        == 403
    login(client, ta)
    page = client.get("/admin/course/settings", headers=HTML).text
    assert 'value="UTC"' in page and 'name="oidc_client_secret"' in page
    bad = client.post("/partials/admin/course/settings", headers=csrf_of(client),
                      data=FORM | {"timezone": "Mars/Olympus"})
    assert bad.status_code == 422 and bad.json()["field"] == "timezone"
    half = client.post("/partials/admin/course/settings", headers=csrf_of(client),
                       data=FORM | {"oidc_client_secret": "", "oidc_client_id": ""})
    assert half.status_code == 422 and half.json()["field"] == "oidc_issuer"
    saved = client.post("/partials/admin/course/settings", headers=csrf_of(client), data=FORM)
    assert saved.status_code == 200 and "course settings saved" in saved.text
    assert "s3cret-value" not in saved.text and "unchanged (one is stored)" in saved.text
    assert (settings.course_timezone, settings.submit_interval_s, settings.oidc_issuer) == (
        "Asia/Taipei", 3600, "https://login.example.edu")
    deadline_form = client.get("/admin", headers=HTML).text
    assert "Asia/Taipei, UTC+08:00" in deadline_form
    assert 'name="penalty_per_day" type="number" min="0" max="100" step="any" value="5"' \
        in deadline_form  # the new default
    login_page = client.get("/login", headers=HTML).text
    assert "Sign in with NTU" in login_page
    audit = client.get("/api/admin/audit", headers=ta.headers).json()["entries"][0]
    assert audit["action"] == "course-settings" and audit["detail"]["timezone"] == "Asia/Taipei"
    assert "s3cret-value" not in str(audit)
    live_worker(db)
    first = client.post("/api/submissions", headers=student.headers,
                        data={"language": "c-program"}, files=[("files", C)])
    second = client.post("/api/submissions", headers=student.headers,
                         data={"language": "c-program"}, files=[("files", C)])
    assert (first.status_code, second.status_code) == (202, 429)  # the new interval
    off = client.post("/partials/admin/course/settings", headers=csrf_of(client),
                      data=FORM | {"oidc_issuer": "", "oidc_client_secret": ""})
    assert off.status_code == 200 and settings.oidc_issuer == ""
    assert "Sign in with" not in client.get("/login", headers=HTML).text
