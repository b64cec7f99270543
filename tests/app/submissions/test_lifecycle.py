"""A submission's life (app/submissions/lifecycle.py): its only writer of status, attempt and
job_key, and each transition on both databases."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.db.models import JudgedTest, Submission
from app.submissions import lifecycle
from tests.app.utils.factories import Account, make_submission

APP = Path(__file__).resolve().parents[3] / "app"
FIELDS = {"status", "attempt", "job_key"}
LIFECYCLE = "submissions/lifecycle.py"
# writes of those names on rows that are not submissions: (file under app/, object, field)
OTHER_ROWS = {("submissions/profiles.py", "profile", "status"),  # Profile
              ("custom_runs/runs.py", "run", "status"),  # CustomRun
              ("upkeep/sweeper.py", "run", "attempt"),  # CustomRun
              ("submissions/jobs.py", "row", "attempt"),  # JudgedTest: which attempt ran it
              ("core/errors.py", "self", "status"),  # UserError's HTTP status
              ("scoreboard/paired/store.py", "run", "status")}  # PairedRun


def targets(node: ast.AST) -> list[ast.expr]:
    """What an assignment statement writes (tuple targets taken apart)."""
    found: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        found = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        found = [node.target]
    flat: list[ast.expr] = []
    for target in found:
        flat.extend(target.elts if isinstance(target, ast.Tuple) else [target])
    return flat


def names_submission(node: ast.AST) -> bool:
    """`Submission(...)` or `update(Submission)` somewhere in this expression."""
    return any(isinstance(n, ast.Name) and n.id == "Submission" for n in ast.walk(node))


def writes(source: str, where: str) -> list[str]:
    """Every write of status, attempt or job_key in `source` that may be a submission's: an
    attribute assignment (other rows named in OTHER_ROWS excepted), a Submission(...) keyword,
    and a bulk update(Submission).values(...) keyword."""
    found = []
    for node in ast.walk(ast.parse(source)):
        for target in targets(node):
            if isinstance(target, ast.Attribute) and target.attr in FIELDS and (
                    where, ast.unparse(target.value), target.attr) not in OTHER_ROWS:
                found.append(f"{where}:{target.lineno}: {ast.unparse(target)} =")
        if isinstance(node, ast.Call):
            func = node.func
            built = isinstance(func, ast.Name) and func.id == "Submission"
            bulk = isinstance(func, ast.Attribute) and func.attr == "values" and names_submission(
                func.value)
            found += [f"{where}:{node.lineno}: {ast.unparse(func)}({k.arg}=...)"
                      for k in node.keywords if (built or bulk) and k.arg in FIELDS]
    return found


def test_only_the_lifecycle_writes_a_submissions_state():
    """Messages are matched to attempts by (attempt, job_key) and the scoreboard and the sweeper
    read status: one module changes them, so every transition is written once."""
    others = [w for path in sorted(APP.rglob("*.py"))
              if (where := path.relative_to(APP).as_posix()) != LIFECYCLE
              for w in writes(path.read_text(), where)]
    assert others == [], "write these through app/submissions/lifecycle.py"


@pytest.mark.parametrize("line", [
    "sub.status = Status.DONE", "sub.status, sub.verdict = 'done', 'X'", "sub.attempt += 1",
    "locked.job_key = key", "Submission(user_id=1, status='queued')",
    "db.execute(update(Submission).where(Submission.id == 1).values(attempt=2))",
])
def test_the_check_sees_every_kind_of_write(line):
    assert writes(line, "submissions/recording.py")


def test_the_lifecycle_itself_writes_them():
    assert writes((APP / LIFECYCLE).read_text(), LIFECYCLE)


def fresh(db: Session, account: Account, status: str = "queued") -> Submission:
    sub = make_submission(db, account, status=status)
    sub.job_key = "k1"
    db.commit()
    return sub


def test_accept_queues_attempt_one_with_its_own_key(db, student):
    first = lifecycle.accept(db, Submission(user_id=student.id, language="c-program",
                                            suite="hw4-mini", compile_log="", error=""))
    second = lifecycle.accept(db, Submission(user_id=student.id, language="c-program",
                                             suite="hw4-mini", compile_log="", error=""))
    db.commit()
    assert (first.status, first.attempt) == ("queued", 1) and first.id is not None
    assert len(first.job_key) == 32 and first.job_key != second.job_key


def test_supersede_closes_only_the_users_queued_ones(db, student, other_student):
    queued, running = fresh(db, student), fresh(db, student, "running")
    theirs = fresh(db, other_student)
    queued.task_id = "task-1"
    db.commit()
    assert lifecycle.supersede_queued(db, student.id) == ["task-1"]
    db.commit()
    db.expire_all()
    assert (queued.status, queued.verdict) == ("done", "SUPERSEDED")
    assert running.status == "running" and theirs.status == "queued"


def test_start_runs_and_beats(db, student):
    sub = fresh(db, student)
    lifecycle.start(sub)
    db.commit()
    assert sub.status == "running" and sub.heartbeat_at is not None


def test_record_final_and_give_up_end_it(db, student, other_student):
    judged, failed = fresh(db, student, "running"), fresh(db, other_student, "running")
    lifecycle.record_final(judged)
    lifecycle.give_up(failed, "worker lost")
    db.commit()
    assert judged.status == "done" and judged.finished_at is not None
    assert (failed.status, failed.verdict) == ("done", "SE")
    assert failed.error == "system error after 1 attempt(s): worker lost"
    assert not lifecycle.is_live(judged, 1, "k1") and lifecycle.is_recorded(judged, 1, "k1")


def test_retry_starts_the_next_attempt_once(db, settings, student):
    sub = fresh(db, student, "running")
    db.add(JudgedTest(submission_id=sub.id, test_id="t01", attempt=1, verdict="AC"))
    db.commit()
    stale = Submission(id=sub.id, attempt=1)  # what a second sweeper still holds
    assert lifecycle.retry(db, sub, "lost", "lost")
    db.commit()
    db.refresh(sub)
    assert (sub.status, sub.attempt, sub.lost, sub.error) == ("queued", 2, 1, "lost")
    assert sub.job_key != "k1" and sub.tests == [] and sub.sent_at is None
    assert not lifecycle.retry(db, stale, "lost too", "lost")  # attempt 1 moved on
    db.refresh(sub)
    assert (sub.attempt, sub.lost) == (2, 1)
    assert not lifecycle.is_live(sub, 1, "k1") and lifecycle.is_live(sub, 2, sub.job_key)


def test_rejudge_starts_over_from_any_state(db, student):
    sub = fresh(db, student, "done")
    sub.verdict, sub.score, sub.failures, sub.error = "WA", 30, 2, "old"
    db.commit()
    lifecycle.rejudge(db, sub)
    db.commit()
    db.refresh(sub)
    assert (sub.status, sub.attempt) == ("queued", 2) and sub.verdict is None and sub.score is None
    assert (sub.failures, sub.error, sub.finished_at) == (0, "", None)
    assert sub.job_key != "k1"


def test_cancel_ends_queued_or_running_work_only(db, student, other_student):
    running, done = fresh(db, student, "running"), fresh(db, other_student, "done")
    lifecycle.cancel(running)
    db.commit()
    assert (running.status, running.verdict) == ("done", "CANCELLED")
    with pytest.raises(UserError, match="only queued or running work can be cancelled"):
        lifecycle.cancel(done)


def test_cancel_queued_takes_one_language(db, student, other_student):
    c_sub = fresh(db, student)
    cuda = make_submission(db, other_student, language="cuda-program")
    assert len(lifecycle.cancel_queued(db, "cuda-program")) == 1
    db.commit()
    db.expire_all()
    assert (cuda.status, cuda.verdict) == ("done", "CANCELLED") and c_sub.status == "queued"
