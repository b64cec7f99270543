"""Recording a judging's feedback: the roofline block with the result, the diagnosis after it, once
per attempt; a rejudge clears both."""

from __future__ import annotations

from app.control.tasks import record_diagnosis
from app.db.models import Submission
from app.submissions import feedback, recording
from tests.app.utils.factories import make_submission
from tests.app.utils.feedback_payloads import diagnosis_message, result_message


def reload(db, sub_id: int) -> Submission:
    db.expire_all()
    return db.get(Submission, sub_id)


def test_a_gpu_result_keeps_its_roofline_and_waits_for_its_diagnosis(db, settings, student):
    sub = make_submission(db, student, language="cuda-program")
    message = result_message("cuda-program", 0.5, failing=("t02",))
    assert recording.record_result(db, settings, sub.id, 1, message)
    sub = reload(db, sub.id)
    assert sub.feedback is not None and sub.result is not None
    rows = sub.feedback["roofline"]
    assert [r["test_id"] for r in rows][:2] == ["t01", "t02"]
    # a whole process against the reference kernel in the cheapest CUDA process: (0.35+0.002)/0.5
    assert rows[0]["start_share"] == 0.7 and rows[0]["speedup"] == 0.704
    assert sub.diagnosis_status == "pending" and sub.diagnosis is None
    assert "feedback" not in sub.result and sub.flag_status == ""


def test_a_diagnosis_is_recorded_once_for_the_current_attempt_only(db, settings, control_env,
                                                                  student):
    sub = make_submission(db, student, language="cuda-program")
    recording.record_result(db, settings, sub.id, 1,
                            result_message("cuda-program", 0.5, failing=("t02",)))
    assert not record_diagnosis(sub.id, 2, diagnosis_message())  # an attempt not recorded
    assert recording_of(db, sub.id) == ("pending", None)
    assert feedback.record_diagnosis(db, sub.id, 1, diagnosis_message())
    assert not feedback.record_diagnosis(db, sub.id, 1, {**diagnosis_message(), "message": "x"})
    status, diagnosis = recording_of(db, sub.id)
    assert status == "done" and diagnosis is not None
    assert diagnosis["message"].startswith("memcheck on a small input")
    finding = diagnosis["reports"][0]["findings"][0]
    assert (finding["where"], finding["thread"]) == ("hw4.cu:23", [16, 0, 0])


def recording_of(db, sub_id: int) -> tuple[str, dict | None]:
    sub = reload(db, sub_id)
    return sub.diagnosis_status, sub.diagnosis


def test_a_passing_or_cpu_submission_expects_no_diagnosis(db, settings, student):
    gpu = make_submission(db, student, language="cuda-kernel")
    recording.record_result(db, settings, gpu.id, 1, result_message("cuda-kernel", 0.01))
    cpu = make_submission(db, student)
    body = {**result_message("cuda-kernel", 0.01, failing=("t01",)), "feedback": None}
    recording.record_result(db, settings, cpu.id, 1, body)
    assert (reload(db, gpu.id).diagnosis_status, reload(db, cpu.id).diagnosis_status) == ("", "")
    assert reload(db, cpu.id).feedback is None


def test_a_rejudge_clears_feedback_diagnosis_and_flags(client, db, settings, student, ta):
    sub = make_submission(db, student, language="cuda-kernel")
    recording.record_result(db, settings, sub.id, 1,
                            result_message("cuda-kernel", 1e-7, failing=("t02",)))
    feedback.record_diagnosis(db, sub.id, 1, diagnosis_message())
    assert reload(db, sub.id).flag_status == "held"
    client.post(f"/api/admin/submissions/{sub.id}/rejudge", headers=ta.headers)
    sub = reload(db, sub.id)
    assert (sub.feedback, sub.diagnosis, sub.diagnosis_status, sub.flag_status) == (
        None, None, "", "")
    assert not feedback.record_diagnosis(db, sub.id, 1, diagnosis_message())
