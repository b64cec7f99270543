"""The scoreboard page shows one tab per GPU model when the fleet mixes models."""

from __future__ import annotations

from app.submissions import recording
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import judged_result, make_submission, make_user

RTX, GTX = "NVIDIA GeForce RTX 3070", "NVIDIA GeForce GTX 1080"


def judged_on(db, settings, account, gpu: str, seconds: float) -> None:
    sub = make_submission(db, account, language="cuda-program")
    result = {**judged_result(10, seconds), "worker": {"gpu": gpu}}
    recording.record_result(db, settings, sub.id, 1, result)


def test_one_model_shows_one_board_without_tabs(client, db, settings, student):
    judged_on(db, settings, student, RTX, 0.5)
    login(client, student)
    page = client.get("/scoreboard", headers=HTML).text
    assert 'id="gpu-tabs"' not in page and 'data-user="alice"' in page


def test_a_mixed_fleet_ranks_within_the_chosen_model(client, db, settings, student):
    bob = make_user(db, "bob")
    judged_on(db, settings, student, RTX, 0.5)
    judged_on(db, settings, bob, RTX, 0.4)
    judged_on(db, settings, bob, GTX, 0.9)
    login(client, student)
    page = client.get("/scoreboard", headers=HTML).text
    assert 'id="gpu-tabs"' in page and f'data-model="{RTX}" class="current"' in page
    assert 'data-user="alice"' in page  # the most used model first
    assert 'hx-get="/partials/scoreboard?gpu_model=NVIDIA+GeForce+RTX+3070"' in page
    gtx = client.get("/scoreboard", params={"gpu_model": GTX}, headers=HTML).text
    assert f'data-model="{GTX}" class="current"' in gtx
    assert 'data-user="bob"' in gtx and 'data-user="alice"' not in gtx
    partial = client.get("/partials/scoreboard", params={"gpu_model": GTX}, headers=HTML).text
    assert 'data-user="alice"' not in partial
