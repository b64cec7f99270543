"""A WA test's mistake is shown on the result page, in the API as a typed field, and
for a custom run's comparison; a damaged one leaves the page working and the field empty."""

from __future__ import annotations

from app.db.models import CustomRun, utcnow
from app.submissions import recording
from kernels.mistakes.match import Mistake
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import judged_result, make_submission

NO_SCALE = Mistake("no_scale", "your output equals attention without the 1/sqrt(d) scale (max "
                   "diff 2e-05 on batches 0-3)", 2e-5, 2.8, "batches 0-3").to_dict()


def test_the_result_page_and_the_api_say_which_mistake(client, db, settings, student):
    sub = make_submission(db, student)
    result = judged_result(9, 0.5)
    result["tests"][9]["mistake"] = NO_SCALE
    recording.record_result(db, settings, sub.id, 1, result)
    login(client, student)
    page = client.get(f"/submissions/{sub.id}", headers=HTML).text
    line = page[page.index('id="mistake-t10"'):]
    assert line[:line.index("</p>")].endswith(
        "<strong>Looks like:</strong> your output equals attention without the 1/sqrt(d) "
        "scale (max diff 2e-05 on batches 0-3)")
    assert page.count('class="mistake"') == 1  # the AC tests carry none
    api = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    rows = {t["id"]: t for t in api["tests"]}
    assert rows["t10"]["mistake"]["name"] == "no_scale"
    assert rows["t10"]["mistake"]["distance"] == 2e-5 and rows["t10"]["mistake"]["how"] == "all"
    assert rows["t01"]["mistake"] is None


def test_the_line_arrives_with_the_test_while_judging(client, db, settings, student):
    sub = make_submission(db, student)
    test = {**judged_result(0, 0.5, total=1)["tests"][0], "mistake": NO_SCALE}
    assert recording.record_progress(db, sub.id, 1, {"type": "test-done", "test": test})
    login(client, student)
    partial = client.get(f"/partials/submissions/{sub.id}", headers=HTML).text
    assert 'id="mistake-t01"' in partial and "without the 1/sqrt(d) scale" in partial


def test_a_damaged_mistake_leaves_the_page_working(client, db, settings, student):
    sub = make_submission(db, student)
    result = judged_result(9, 0.5)
    result["tests"][9]["mistake"] = {"name": "no_scale"}  # no line
    recording.record_result(db, settings, sub.id, 1, result)
    login(client, student)
    page = client.get(f"/submissions/{sub.id}", headers=HTML)
    assert page.status_code == 200 and 'id="mistake-t10"' not in page.text
    api = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    assert api["tests"][9]["mistake"] is None


def test_a_custom_runs_comparison_names_the_mistake(client, db, student):
    report = {"ok": False, "status": "fail", "max_error": 2.8, "over_tolerance": 100,
              "nonfinite": 0, "mismatches": [], "message": "fail", "tolerance": 5e-3,
              "mistake": NO_SCALE}
    run = CustomRun(user_id=student.id, folder="mistake-run", B=4, N=64, d=32, attempt=1,
                    status="done", reference="cpu-float64-v1", error="", report=report,
                    has_own_output=True, finished_at=utcnow())
    db.add(run)
    db.commit()
    login(client, student)
    api = client.get(f"/api/custom-runs/{run.id}", headers=student.headers).json()
    assert api["mistake"]["name"] == "no_scale" and api["report"]["mistake"]["name"] == "no_scale"
    page = client.get(f"/custom/{run.id}", headers=HTML).text
    assert "<strong>Looks like:</strong> your output equals attention without" in page
