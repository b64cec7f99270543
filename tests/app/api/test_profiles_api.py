"""ncu profiles: who may ask, the queued request, recording once, the .ncu-rep for owner and TAs."""

from __future__ import annotations

import base64

from app.control.tasks import record_profile
from app.db.models import AuditLog, Profile
from app.submissions import recording
from tests.app.utils.factories import make_submission
from tests.app.utils.feedback_payloads import profile_message, result_message

REPORT = b"NVIDIA Nsight Compute report\x00\x01\x02"


def judged_gpu_submission(db, settings, account):
    sub = make_submission(db, account, language="cuda-program")
    recording.record_result(db, settings, sub.id, 1, result_message("cuda-program", 0.4))
    return sub


def ask(client, account, sub_id: int, test_id: str = "t03"):
    return client.post(f"/api/submissions/{sub_id}/profiles", headers=account.headers,
                       data={"test_id": test_id})


def test_students_may_ask_for_a_profile_only_when_a_ta_allows_it(client, db, settings,
                                                                 student, ta):
    sub = judged_gpu_submission(db, settings, student)
    refused = ask(client, student, sub.id)
    assert refused.status_code == 403 and "unless a TA allows" in refused.json()["detail"]
    assert client.post("/api/admin/student-profiles/on", headers=ta.headers).json() == {
        "allowed": True}
    queued = ask(client, student, sub.id)
    assert queued.status_code == 202 and queued.json()["status"] == "queued"
    assert ask(client, student, sub.id).status_code == 409  # one queued at a time
    assert db.query(AuditLog).filter_by(action="student-profiles").count() == 1


def test_a_ta_profile_request_names_a_real_test_of_a_gpu_submission(client, db, settings,
                                                                    student, ta):
    sub = judged_gpu_submission(db, settings, student)
    wrong = ask(client, ta, sub.id, "t99")
    assert wrong.status_code == 422 and wrong.json()["field"] == "test_id"
    cpu = make_submission(db, student)
    assert ask(client, ta, cpu.id).json()["field"] == "language"
    assert ask(client, ta, sub.id).status_code == 202


def test_a_recorded_profile_is_kept_once_and_downloadable_by_owner_and_ta_only(
        client, db, settings, control_env, student, other_student, ta):
    sub = judged_gpu_submission(db, settings, student)
    profile_id = ask(client, ta, sub.id).json()["id"]
    outcome = {"profile": profile_message("t03"), "report": base64.b64encode(REPORT).decode(),
               "error": None}
    assert record_profile(profile_id, outcome)
    assert not record_profile(profile_id, {"profile": None, "report": None, "error": "late"})
    listed = client.get(f"/api/submissions/{sub.id}/profiles", headers=student.headers).json()
    assert listed[0]["status"] == "done" and listed[0]["error"] == ""
    assert listed[0]["main"]["stalls"][0]["reason"] == "no_instruction"
    url = listed[0]["report_url"]
    assert client.get(url, headers=student.headers).content == REPORT
    assert client.get(url, headers=ta.headers).status_code == 200
    assert client.get(url, headers=other_student.headers).status_code == 404
    assert db.get(Profile, profile_id).report_file.endswith("t03.ncu-rep")
