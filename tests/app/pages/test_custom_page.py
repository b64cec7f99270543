"""The custom-run page tells a student the limits before they upload: the hourly number, the
time limit of the reference computation and how long files are kept."""

from __future__ import annotations

HTML = {"Accept": "text/html"}


def login(client, account) -> None:
    response = client.post("/login", data={"username": account.username,
                                           "password": account.password},
                           follow_redirects=False)
    assert response.status_code == 303


def test_the_page_states_the_limits(client, settings, student):
    client.app.state.settings = settings.model_copy(update={
        "custom_runs_per_hour": 4, "custom_run_time_limit_s": 90.0, "custom_run_keep_h": 12.0})
    login(client, student)
    page = client.get("/custom", headers=HTML)
    assert page.status_code == 200
    for text in ("At most 4 per hour", "stops after 90 s", "deleted 12 h after upload",
                 "wait while submissions are being judged", 'id="custom-runs"'):
        assert text in page.text, text


def test_tas_are_not_shown_a_limit_they_do_not_have(client, ta):
    login(client, ta)
    assert "per hour" not in client.get("/custom", headers=HTML).text
