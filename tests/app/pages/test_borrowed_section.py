"""A TA sees every BK result with what ran, and with one click lets library kernels compute the
answer for one assignment (its BK submissions judged again, the next judgings told so), or
forbids them again; a student's BK result links to the rule in words."""

from __future__ import annotations

from sqlalchemy import select

from app.db.models import AuditLog, Submission
from app.submissions import recording
from app.submissions.jobs import judge_payload
from tests.app.pages.test_course_pages import csrf_of
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import judged_result, make_submission

LIBRARY = ("a kernel your submission did not compile ran on the GPU: sm90_xmma_gemm_f32f32; "
           "this suite accepts only your own kernels (docs/homework.md#borrowed-kernels)")


def borrowed_result() -> dict:
    result = judged_result(10, 0.1)
    result["tests"][1].update(verdict="BK", message=LIBRARY)
    return result


def test_the_ta_allows_a_library_for_an_assignment_and_undoes_it(client, db, settings, student,
                                                                  ta):
    bk = make_submission(db, student, language="cuda-program")
    recording.record_result(db, settings, bk.id, 1, borrowed_result())
    ac = make_submission(db, student, language="cuda-program")
    recording.record_result(db, settings, ac.id, 1, judged_result(10, 0.1))
    assert db.get(Submission, bk.id).verdict == "BK"
    login(client, ta)
    section = client.get("/admin/borrowed", headers=HTML).text
    assert f'href="/submissions/{bk.id}"' in section and "sm90_xmma_gemm_f32f32" in section
    assert "library kernels forbidden" in section and "Allow library kernels for" in section
    assert f'href="/submissions/{ac.id}"' not in section
    assert 'hx-get="/admin/borrowed"' in client.get("/admin", headers=HTML).text
    name = db.get(Submission, bk.id).assignment.name

    allowed = client.post(f"/partials/admin/borrowed/{name}/allow", headers=csrf_of(client))
    assert allowed.status_code == 200
    assert f"{name}: library kernels allowed; judging 1 submission(s) again" in allowed.text
    assert "Undo: forbid library kernels again" in allowed.text
    db.expire_all()
    again = db.get(Submission, bk.id)
    assert (again.status, again.verdict, again.attempt) == ("queued", None, 2)
    assert judge_payload(again, settings).libraries_allowed
    assert db.get(Submission, ac.id).attempt == 1  # an AC cannot change: left alone
    assert client.post(f"/partials/admin/borrowed/{name}/allow", headers=csrf_of(client)
                       ).text.count("already allowed; nothing changed") == 1

    undone = client.post(f"/partials/admin/borrowed/{name}/forbid", headers=csrf_of(client))
    assert f"{name}: library kernels forbidden; judging 2 submission(s) again" in undone.text
    db.expire_all()
    assert [db.get(Submission, i).attempt for i in (bk.id, ac.id)] == [3, 2]
    assert not judge_payload(db.get(Submission, ac.id), settings).libraries_allowed
    actions = db.scalars(select(AuditLog.action).order_by(AuditLog.id)).all()
    assert actions.count("libraries-allow") == 1 and actions.count("libraries-forbid") == 1


def test_students_cannot_switch_the_rule_and_read_it_under_their_bk(client, db, settings,
                                                                   student):
    bk = make_submission(db, student, language="cuda-program")
    recording.record_result(db, settings, bk.id, 1, borrowed_result())
    login(client, student)
    name = db.get(Submission, bk.id).assignment.name
    refused = client.post(f"/partials/admin/borrowed/{name}/allow", headers=csrf_of(client))
    assert refused.status_code == 403
    assert client.get("/admin/borrowed", headers=HTML).status_code == 403
    page = client.get(f"/submissions/{bk.id}", headers=HTML).text
    assert 'id="bk-note"' in page and 'href="/rules#borrowed-kernels"' in page
    assert "sm90_xmma_gemm_f32f32" in page  # the test's message names what ran
    rules = client.get("/rules", headers=HTML).text
    assert 'id="borrowed-kernels"' in rules and "One GPU process per test" in rules


def test_the_assignment_file_carries_the_rule(client, db, settings, ta):
    made = client.post("/api/admin/assignments", headers=ta.headers,
                       json={"name": "cublas-well", "suite": "hw4", "libraries_allowed": True})
    assert made.status_code in (200, 201) and made.json()["libraries_allowed"] is True
    toml = client.get("/api/admin/assignments/cublas-well/export", headers=ta.headers).json()
    assert "libraries_allowed = true" in toml["text"]
