"""A result under the speed-of-light floor is held from the ranking until a TA clears it."""

from __future__ import annotations

from sqlalchemy import select

from app.db.models import AuditLog
from app.submissions import recording
from tests.app.utils.factories import make_submission
from tests.app.utils.feedback_payloads import result_message


def board(client, account) -> list[tuple[str, int]]:
    rows = client.get("/api/scoreboard", headers=account.headers).json()["rows"]
    return [(r["user"], r["passed"]) for r in rows]


def test_a_flagged_submission_is_not_ranked_until_a_ta_clears_it(client, db, settings,
                                                                  student, ta):
    honest = make_submission(db, student, language="cuda-kernel")
    recording.record_result(db, settings, honest.id, 1,
                            result_message("cuda-kernel", 0.01, failing=("t09", "t10")))
    forged = make_submission(db, student, language="cuda-kernel")
    recording.record_result(db, settings, forged.id, 1, result_message("cuda-kernel", 1e-7))
    assert board(client, student) == [("alice", 8)]  # the best unflagged one counts
    listed = client.get("/api/admin/submissions", headers=ta.headers).json()
    held = next(s for s in listed if s["id"] == forged.id)
    assert held["flag_status"] == "held" and "speed of light" in held["flags"][0]["reason"]

    refused = client.post(f"/api/admin/submissions/{forged.id}/clear-flag",
                          headers=student.headers)
    assert refused.status_code == 403
    cleared = client.post(f"/api/admin/submissions/{forged.id}/clear-flag", headers=ta.headers)
    assert cleared.json() == {"id": forged.id, "flag_status": "cleared"}
    assert board(client, student) == [("alice", 10)]
    entry = db.scalar(select(AuditLog).where(AuditLog.action == "clear-flag"))
    assert (entry.actor_id, entry.target) == (ta.id, f"submission {forged.id}")
    assert entry.detail["tests"][0] == "t01"
    again = client.post(f"/api/admin/submissions/{forged.id}/clear-flag", headers=ta.headers)
    assert again.status_code == 409
