"""Small factories for the service tests: users with tokens, judged submissions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.accounts import users
from app.course import assignments
from app.db.models import Submission, SubmissionFile, WorkerStatus, utcnow
from app.scoreboard.standing.maintain import current_state

PASSWORD = "correct horse battery"


@dataclass
class Account:
    """A user the tests act as."""

    id: int  # user id
    username: str  # login name
    password: str  # login password
    headers: dict[str, str]  # Authorization header with a personal token


def make_user(db: Session, username: str, role: str = "student") -> Account:
    user = users.add_user(db, username, role, PASSWORD, display_name=username.title(),
                          email=f"{username}@example.edu")
    token = users.issue_token(db, user, "test", None)
    db.commit()
    return Account(user.id, username, PASSWORD, {"Authorization": f"Bearer {token}"})


def judged_result(passed: int, seconds: float, total: int = 10) -> dict[str, Any]:
    """A JudgeResult.to_dict()-shaped result: the first `passed` tests AC, the rest WA."""
    tests = [{"id": f"t{i + 1:02d}", "verdict": "AC" if i < passed else "WA",
              "seconds": seconds, "max_error": 1e-6 if i < passed else 0.5,
              "time_limit_s": 10.0, "message": ""} for i in range(total)]
    return {"compile": {"ok": True, "log": ""}, "score": max(0, 60 - 3 * (total - passed)),
            "passed": passed, "tests": tests, "system_error": None}


def make_submission(db: Session, account: Account, status: str = "queued",
                    attempt: int = 1, language: str = "c-program") -> Submission:
    """A submission row as the API would have stored it (no task sent)."""
    board = assignments.in_term(db, "hw4-mini")[0]  # the default one, made if none exists
    current_state(db)  # which left the standing to its next reader: read, as a deployment's is
    sub = Submission(user_id=account.id, language=language, suite="hw4-mini", status=status,
                     attempt=attempt, compile_log="", error="", assignment_id=board.id)
    sub.files = [SubmissionFile(name="hw4.c", content=b"int main(void) { return 0; }\n")]
    db.add(sub)
    db.commit()
    return sub


def live_worker(db: Session, hostname: str = "cpu@test",
                languages: tuple[str, ...] = ("c-program",), gpu: str = "cpu") -> WorkerStatus:
    """A worker whose heartbeat just arrived: uploads in its languages are accepted."""
    queues = "gpu" if gpu != "cpu" else "cpu"
    row = WorkerStatus(hostname=hostname, gpu=gpu, queues=queues, busy=False, current="",
                       languages=",".join(languages), last_seen=utcnow())
    db.merge(row)
    db.commit()
    return row
