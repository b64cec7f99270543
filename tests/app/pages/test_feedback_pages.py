"""The submission page shows the roofline figures and charts, the diagnosis and the profiles."""

from __future__ import annotations

from datetime import timedelta

from app.db.models import utcnow
from app.submissions import feedback, recording
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import make_submission
from tests.app.utils.feedback_payloads import diagnosis_message, result_message


def test_the_page_shows_figures_charts_and_the_diagnosis_once_it_arrives(client, db, settings,
                                                                         student):
    sub = make_submission(db, student, language="cuda-program")
    recording.record_result(db, settings, sub.id, 1,
                            result_message("cuda-program", 0.5, failing=("t02",)))
    login(client, student)
    page = client.get(f"/submissions/{sub.id}", headers=HTML).text
    assert page.count('<circle class="point"') == 10  # the roofline: one dot per test
    assert page.count('<rect class="time"') == 10 and 'class="reference"' in page
    assert "NVIDIA H100 80GB HBM3" in page and "51.0 TFLOP/s" in page
    # t01 (B=320, N=128, d=32) in 0.5 s: 0.671 GFLOP, 21 MB, 0.00134 TFLOP/s, a 0.0132 ms
    # compute-bound floor at 51 TFLOP/s, the reference kernel's 0.002 s after a 0.35 s CUDA
    # start-up (0.704x), 70% of the time is that start-up
    t01 = page[page.index("<td>t01</td>"):page.index("<td>t02</td>")]
    for cell in ("0.671", "21", "0.00134", "0.002", "0.704x", "70% (0.35 s)"):
        assert f"<td>{cell}</td>" in t01, cell
    assert "<td>0.0132 <span" in t01 and "(compute)" in t01
    assert "running diagnosis..." in page and 'hx-trigger="every 3s"' in page
    assert "Profile test" not in page  # students may not profile by default

    feedback.record_diagnosis(db, sub.id, 1, diagnosis_message())
    page = client.get(f"/partials/submissions/{sub.id}", headers=HTML).text
    assert "running diagnosis..." not in page
    assert "<td>Invalid __shared__ write of size 16 bytes</td><td>hw4.cu:23</td>" in page
    assert "<td>(16,0,0)</td><td>(0,0,0)</td>" in page and "Traceback" not in page


def test_a_ta_sees_the_flag_and_the_profile_form(client, db, settings, student, ta):
    sub = make_submission(db, student, language="cuda-kernel")
    recording.record_result(db, settings, sub.id, 1, result_message("cuda-kernel", 1e-7))
    login(client, ta)
    page = client.get(f"/submissions/{sub.id}", headers=HTML).text
    assert "held from the scoreboard" in page and "Clear the flag" in page
    assert 'name="test_id"' in page and "<option>t10</option>" in page
    admin = client.get("/admin", headers=HTML).text
    assert "held (t01" in admin and "Allow students" in admin


def test_a_diagnosis_that_never_comes_stops_showing_as_running(client, db, settings, student):
    sub = make_submission(db, student, language="cuda-kernel")
    recording.record_result(db, settings, sub.id, 1,
                            result_message("cuda-kernel", 0.01, failing=("t03",)))
    db.refresh(sub)
    sub.finished_at = utcnow() - timedelta(hours=1)
    db.commit()
    login(client, student)
    page = client.get(f"/submissions/{sub.id}", headers=HTML).text
    assert "No diagnosis arrived" in page and "running diagnosis..." not in page
