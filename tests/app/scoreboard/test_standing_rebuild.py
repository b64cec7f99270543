"""The standing kept at write time equals the board computed from every submission, after any
sequence of what moves boards: results, refinements, rejudges, holds and clears, freezes, renames,
role changes, deletions, bulk updates, failures, cancellations (a seeded random walk on both
databases, checked after every step), and without it being asked to (the session hooks)."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from sqlalchemy import delete, select, text, update
from sqlalchemy import event as sqlalchemy_event
from sqlalchemy.orm import Session

from app.accounts import users
from app.changefeed.changes import SCOREBOARD
from app.core.config import Settings
from app.db.models import BoardState, Change, Standing, Submission, User
from app.db.session import get_engine
from app.scoreboard import boards, freeze
from app.scoreboard import rows as scoreboard
from app.scoreboard.boards import View
from app.scoreboard.standing import maintain
from app.scoreboard.standing.rules import judged_models
from app.submissions import feedback, recording, refinement, ta_actions
from app.wiring import wired_sessions
from flashjudge.contract import Status
from tests.app.submissions.test_refinement import report
from tests.app.utils import board_oracle
from tests.app.utils.factories import Account, judged_result, make_submission, make_user
from tests.app.utils.processes import wait_for

RTX, GTX = "NVIDIA GeForce RTX 3070", "NVIDIA GeForce GTX 1080"
VIEWS = [View(live, model) for live in (False, True) for model in (None, RTX, GTX, "NVIDIA A2")]


def comparable(row: scoreboard.Row) -> tuple[Any, ...]:
    return (row.rank, row.user, row.display_name, row.passed, row.time, row.score,
            row.submission_id, row.tests, row.late, row.band_s)


def assert_boards_match(db: Session) -> None:
    """The standing is what a rebuild would write, its list of GPU models is the query's, and
    every board read from it is the board computed the old way, from every submission."""
    db.expire_all()
    assert maintain.differences(db) == set()
    models = maintain.current_state(db).models
    assert models == judged_models(db)  # the boards' tabs and the API's gpu_models
    for view in VIEWS:
        frozen, expected = board_oracle.build(db, view.live, view.gpu_model)
        served = boards.read(db, 0, models, view)
        assert served.frozen == frozen, view
        assert [comparable(r) for r in served.rows] == [comparable(r) for r in expected], view
    db.rollback()


class Walk:
    """Random steps through the services (as the API and the control worker call them)."""

    def __init__(self, db: Session, settings: Settings, rng: random.Random,
                 accounts: list[Account], ta: User) -> None:
        self.db, self.settings, self.rng, self.accounts, self.ta = db, settings, rng, accounts, ta

    def ids(self, *where: Any) -> list[int]:
        return list(self.db.scalars(select(Submission.id).where(*where).order_by(Submission.id)))

    def pick(self, *where: Any) -> Submission | None:
        found = self.ids(*where)
        return self.db.get(Submission, self.rng.choice(found)) if found else None

    def submit(self) -> None:
        sub = make_submission(self.db, self.rng.choice(self.accounts),
                              language=self.rng.choice(["c-program", "cuda-program"]))
        if self.rng.random() < 0.2:
            sub.late, sub.late_penalty = True, 10.0
            self.db.commit()

    def result(self) -> None:
        sub = self.pick(Submission.status != Status.DONE)
        if sub is None:
            return self.submit()
        passed = self.rng.randint(0, 10)
        message = judged_result(passed, self.rng.choice([0.1, 0.2, 0.3]))
        model = self.rng.choice([None, RTX, RTX, GTX])
        message["worker"] = {"hostname": "w@x", "gpu": model} if model else {}
        if self.rng.random() < 0.2:
            message["feedback"] = {"flags": [{"test_id": "t01", "reason": "speed of light"}]}
        recording.record_result(self.db, self.settings, sub.id, sub.attempt, message)

    def progress(self) -> None:
        sub = self.pick(Submission.status != Status.DONE)
        if sub is not None:
            test = {"id": "t01", "verdict": "AC", "seconds": 0.05, "time_limit_s": 10.0}
            recording.record_progress(self.db, sub.id, sub.attempt,
                                      {"type": "test-done", "test": test})

    def refine(self) -> None:
        sub = self.pick(Submission.status == Status.DONE, Submission.passed > 0)
        if sub is not None:
            passed = [t.test_id for t in sub.tests if t.verdict == "AC"]
            stat = self.rng.choice([0.05, 0.1, 0.15])
            refinement.record_timing(self.db, sub.id, sub.attempt, report(stat, 0.01, passed))

    def rejudge(self) -> None:
        sub = self.pick(Submission.status == Status.DONE, Submission.passed.is_not(None))
        if sub is not None:
            ta_actions.rejudge(self.db, self.ta, sub, self.settings)

    def clear(self) -> None:
        sub = self.pick(Submission.flag_status == "held")
        if sub is not None:
            feedback.clear_flag(self.db, self.ta, sub)

    def freeze(self) -> None:
        freeze.freeze(self.db, self.ta, scoreboard.frozen_at(self.db) is None)

    def rename(self) -> None:
        account = self.rng.choice(self.accounts)
        users.add_user(self.db, account.username, "student",
                       display_name=f"{account.username.title()} {self.rng.randint(1, 9)}")
        self.db.commit()

    def role(self) -> None:
        user = self.db.scalar(select(User).where(User.username == self.rng.choice(
            self.accounts).username))
        assert user is not None
        users.add_user(self.db, user.username, "ta" if user.role == "student" else "student")
        self.db.commit()

    def delete(self) -> None:
        sub = self.pick(Submission.status == Status.DONE)
        if sub is not None:
            self.db.delete(sub)
            self.db.commit()

    def bulk(self) -> None:
        """What no service does today: a bulk UPDATE of ranking fields, by id."""
        sub = self.pick(Submission.status == Status.DONE)
        if sub is not None:
            held = "" if sub.flag_status == "held" else "held"
            self.db.execute(update(Submission).where(Submission.id == sub.id)
                            .values(flag_status=held))
            self.db.commit()

    def failure(self) -> None:
        sub = self.pick(Submission.status != Status.DONE)
        if sub is not None:
            recording.record_failure(self.db, self.settings, sub.id, sub.attempt, "lost GPU")

    def cancel(self) -> None:
        ta_actions.cancel_queued(self.db, self.ta, "c-program", self.settings)

    STEPS = {"submit": 5, "result": 8, "progress": 3, "refine": 3, "rejudge": 2, "clear": 2,
             "freeze": 1, "rename": 1, "role": 1, "delete": 1, "bulk": 1, "failure": 1,
             "cancel": 1}

    def step(self) -> str:
        name = self.rng.choices(list(self.STEPS), weights=list(self.STEPS.values()))[0]
        getattr(self, name)()
        return name


@pytest.mark.parametrize("seed", [7, 2026])
def test_the_standing_equals_a_full_rebuild_after_every_step(db, settings, seed):
    rng = random.Random(seed)
    accounts = [make_user(db, name) for name in ("alice", "bob", "carol", "dave", "erin")]
    ta = db.get(User, make_user(db, "tara", "ta").id)
    walk = Walk(db, settings, rng, accounts, ta)
    taken = []
    for _ in range(90):
        taken.append(walk.step())
        assert_boards_match(db)
    assert {"result", "refine", "rejudge", "freeze"} <= set(taken)  # the walk went places
    assert db.scalar(select(Standing.id).limit(1)) is not None


def test_a_result_bumps_the_version_and_notes_the_change_in_its_transaction(db, settings,
                                                                            student):
    sub = make_submission(db, student)
    before = maintain.current_version(db)
    notes = len(db.scalars(select(Change).where(Change.topic == SCOREBOARD)).all())
    recording.record_result(db, settings, sub.id, 1, judged_result(7, 0.5))
    assert maintain.current_version(db) == before + 1
    assert len(db.scalars(select(Change).where(Change.topic == SCOREBOARD)).all()) == notes + 1
    stored = db.scalar(select(Standing).where(Standing.user_id == student.id))
    assert (stored.passed, stored.submission_id, stored.stamp) == (7, sub.id, before + 1)


def test_progress_of_a_running_judging_moves_no_board(db, settings, student):
    done = make_submission(db, student)
    recording.record_result(db, settings, done.id, 1, judged_result(5, 0.5))
    running = make_submission(db, student)
    version = maintain.current_version(db)
    test = {"id": "t01", "verdict": "AC", "seconds": 0.1, "time_limit_s": 10.0}
    for kind in ("compile-done", "test-start", "test-done"):
        recording.record_progress(db, running.id, 1, {"type": kind, "ok": True, "test": test})
    assert maintain.current_version(db) == version  # pages are not told to refetch for nothing


def test_an_emptied_standing_is_rebuilt_by_the_first_reader(db, settings, student, client):
    sub = make_submission(db, student)
    recording.record_result(db, settings, sub.id, 1, judged_result(6, 0.5))
    with get_engine(settings.db_url).begin() as conn:  # around the service: no hooks see it
        conn.execute(delete(Standing))
        conn.execute(delete(BoardState))
    rows = client.get("/api/scoreboard", headers=student.headers).json()["rows"]
    assert [(r["user"], r["passed"]) for r in rows] == [("alice", 6)]
    assert maintain.differences(db) == set()


def judge_unsaved(session: Session, submission_id: int, passed: int) -> None:
    """A result written but not committed: what record_result does up to its commit."""
    sub = session.get(Submission, submission_id)
    assert sub is not None
    sub.status, sub.verdict, sub.passed, sub.score, sub.total_time = (
        Status.DONE, "WA", passed, 3 * passed, 1.0)
    session.flush()


def test_two_results_of_one_student_committing_at_once_both_count(settings, db, student):
    """The second commit waits on the board's lock, then ranks with the first one's result:
    neither overwrites the student's row with a best that misses the other."""
    if not settings.database_url:
        pytest.skip("SQLite lets one writer in at a time: nothing to race")
    better, worse = make_submission(db, student).id, make_submission(db, student).id
    first, second = wired_sessions(settings.db_url)(), wired_sessions(settings.db_url)()
    judge_unsaved(first, better, 10)
    maintain.locked_state(first)  # as first's commit would: the lock, held until it commits
    judge_unsaved(second, worse, 5)
    pid = second.connection().exec_driver_sql("select pg_backend_pid()").scalar()
    committing = threading.Thread(target=second.commit)
    committing.start()
    wait_for(lambda: db.execute(text("select wait_event_type from pg_stat_activity where pid = "
                                     ":pid"), {"pid": pid}).scalar() == "Lock", 30,
             "the second commit to wait for the board's lock")
    first.commit()
    committing.join(timeout=30)
    first.close()
    second.close()
    stored = db.scalar(select(Standing).where(Standing.user_id == student.id,
                                              Standing.cut == "live", Standing.gpu_model == ""))
    assert stored.submission_id == better
    assert maintain.differences(db) == set()


def test_an_upload_and_its_supersede_leave_the_board_and_its_lock_alone(client, db, settings,
                                                                       student):
    """A queued upload shows on no board until it is judged, nor does the queued one a newer
    upload supersedes: neither takes the board's lock (a burst of 400 uploads committed one
    after another behind it) nor moves the version (pages would refetch for nothing)."""
    done = make_submission(db, student)
    recording.record_result(db, settings, done.id, 1, judged_result(5, 0.5))
    version = maintain.current_version(db)
    sent: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        """The board's lock and writes (the live poller's plain reads go on meanwhile)."""
        touches = "board_state" in statement or "standings" in statement
        if touches and ("FOR UPDATE" in statement or not statement.startswith("SELECT")):
            sent.append(statement)

    engine = get_engine(settings.db_url)
    sqlalchemy_event.listen(engine, "before_cursor_execute", note)
    try:
        for _ in range(2):  # the second supersedes the first, still queued
            answer = client.post("/api/submissions", headers=student.headers,
                                 data={"language": "c-program"},
                                 files=[("files", ("hw4.c", b"int main(void){return 0;}\n"))])
            assert answer.status_code == 202, answer.text
    finally:
        sqlalchemy_event.remove(engine, "before_cursor_execute", note)
    assert sent == []
    assert maintain.current_version(db) == version
