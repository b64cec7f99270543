"""The final standing on the service side: overlapping neighbours are found on the
board students see, a paired run is asked for once per pair (at a freeze or on the TA's button),
its outcome is recorded for the request it answers, and the TA page and the board say how it
ended."""

from __future__ import annotations

import ast
import base64
import json
import math
from pathlib import Path

import pytest
import redis
from sqlalchemy.orm import Session

from app.control import tasks as control_tasks
from app.core.config import Settings
from app.db.models import PairedRun
from app.scoreboard.paired import service, store
from app.scoreboard.paired.pairs import overlapping
from app.scoreboard.paired.progress import board_notes
from app.scoreboard.rows import Row
from app.submissions import recording, refinement
from flashjudge.contract import PairedResult, PairedRound
from tests.app.submissions.test_refinement import report
from tests.app.utils.factories import Account, judged_result, make_submission, make_user

APP = Path(__file__).resolve().parents[3] / "app"


def row(user: str, passed: int, time: float, band: float | None) -> Row:
    return Row(0, user, user, passed, time, 0, 0, {}, band_s=band)


def test_neighbours_overlap_when_their_gap_is_within_both_bands():
    rows = [row("a", 3, 0.75, 0.01), row("b", 3, 0.765, 0.02), row("c", 3, 1.05, 0.02),
            row("d", 2, 1.06, 0.5)]
    assert [(p.above.user, p.below.user) for p in overlapping(rows)] == [("a", "b")]


def test_a_band_is_never_narrower_than_the_spread_between_judgings():
    rows = [row("a", 3, 1.0, None), row("b", 3, 1.07, 0.001), row("c", 3, 1.3, None)]
    assert [(p.above.user, p.below.user) for p in overlapping(rows)] == [("a", "b")]


def judged(db: Session, settings: Settings, account: Account, seconds: float,
           band: float) -> int:
    """A recorded c-program submission, 3 of 3 tests at `seconds` each, refined to +-band."""
    sub = make_submission(db, account, language="c-program")
    recording.record_result(db, settings, sub.id, 1, judged_result(3, seconds, total=3))
    refinement.record_timing(db, sub.id, 1, report(seconds, band, ["t01", "t02", "t03"]))
    return sub.id


def board(db: Session, settings: Settings, student: Account, other: Account) -> tuple[int, int]:
    """alice and bob overlap; carol is clearly slower; dave passed fewer tests."""
    a = judged(db, settings, student, 0.25, 0.01)
    b = judged(db, settings, other, 0.255, 0.02)
    judged(db, settings, make_user(db, "carol"), 0.35, 0.02)
    make_user(db, "dave")
    return a, b


def paired_messages(settings: Settings) -> list[dict]:
    """The paired_run payloads waiting on the cpu queue of this backend's broker."""
    if settings.broker_url:
        client = redis.Redis.from_url(settings.broker_url)
        raw = [m for key in client.scan_iter(b"cpu*") for m in client.lrange(key, 0, -1)]
        messages = [json.loads(m) for m in raw]
    else:
        paths = (settings.data_dir / "broker" / "queue").glob("*.cpu.msg")
        messages = [json.loads(p.read_text()) for p in paths]
    return [m for m in messages if m["headers"]["task"] == "flashjudge.paired_run"]


def test_the_overlapping_pair_is_sent_once_on_the_tests_both_passed(db, settings, student,
                                                                    other_student):
    a, b = board(db, settings, student, other_student)
    started = service.start(db, settings)
    assert (started.overlapping, started.sent, started.known) == (1, 1, 0)
    assert "1 paired comparison(s) sent" in started.message()
    run = db.query(PairedRun).one()
    assert (run.submission_a, run.submission_b, run.user_a, run.user_b) == (a, b, "alice", "bob")
    assert run.status == "pending" and run.budget_s == settings.paired_budget_s
    assert service.start(db, settings).known == 1 and db.query(PairedRun).count() == 1
    assert len(paired_messages(settings)) == 1


def test_the_pair_goes_with_each_tests_judged_seconds(db, settings, student, other_student):
    """The worker draws its rounds from these (worker/timing/round_plan.py)."""
    board(db, settings, student, other_student)
    service.start(db, settings)
    (message,) = paired_messages(settings)
    body = json.loads(base64.b64decode(message["body"]))
    judged = body[1]["payload"]["judged"]
    assert sorted(judged) == ["t01", "t02", "t03"]
    assert [pytest.approx(s, rel=0.05) for s in judged["t02"]] == [0.25, 0.255]


def outcome(outcome: str, rounds: int = 14, gpu_s: float = 12.5) -> PairedResult:
    return PairedResult(outcome, "budget" if outcome == "tied" else "ordered",
                        [PairedRound(0.75, 0.76, gpu_s / rounds, i % 2 == 0)
                         for i in range(rounds)], gpu_s=gpu_s)


def test_an_outcome_counts_only_for_the_request_it_answers(db, settings, student,
                                                           other_student):
    board(db, settings, student, other_student)
    service.start(db, settings)
    run = db.query(PairedRun).one()
    assert not store.record(db, run.id, "not-the-key", outcome("tied"))
    assert store.record(db, run.id, run.key, outcome("b-faster"))
    assert not store.record(db, run.id, run.key, outcome("tied"))  # a second delivery
    [settled] = store.settled(db)
    assert (settled.faster_user, settled.slower_user, settled.tied) == ("bob", "alice", False)


def test_a_comparison_the_budget_ended_before_any_interval_is_recorded(db, settings, student,
                                                                       other_student):
    """Found on PostgreSQL: three rounds have no interval, and -Infinity is no JSON."""
    board(db, settings, student, other_student)
    service.start(db, settings)
    run = db.query(PairedRun).one()
    short = PairedResult("tied", "budget", [PairedRound(0.7, 0.75, 1.0, True)] * 3,
                         low=-math.inf, high=math.inf, gpu_s=3.0)
    message = json.loads(json.dumps(short.to_dict(), allow_nan=False))
    assert message["low"] is None and message["high"] is None
    assert store.record(db, run.id, run.key, PairedResult.from_dict(message))
    db.expire_all()
    assert (run.status, run.outcome, run.rounds) == ("done", "tied", 3)


def test_the_ta_page_and_the_board_show_budget_progress_and_the_outcome(
        client, db, settings, student, other_student, ta):
    board(db, settings, student, other_student)
    page = client.post("/partials/admin/paired-runs", headers=ta.headers).text
    assert "1 paired comparison(s) sent" in page and "Pairs pending 1 · done 0" in page
    assert "GPU seconds spent 0.0 of 300 allowed" in page
    run = db.query(PairedRun).one()
    store.record(db, run.id, run.key, outcome("tied"))
    page = client.get("/admin", headers=ta.headers).text
    assert "Pairs pending 0 · done 1" in page and "GPU seconds spent 12.5 of 300" in page
    assert "tied after 14 paired rounds" in page
    board_page = client.get("/scoreboard", headers=ta.headers).text
    assert "alice and bob: tied after 14 paired rounds" in board_page
    assert "paired rounds" not in client.get("/scoreboard", headers=student.headers).text


def test_an_order_found_by_paired_runs_reorders_the_board(client, db, settings, student,
                                                          other_student):
    board(db, settings, student, other_student)  # alice 0.750 s, bob 0.765 s
    before = client.get("/api/scoreboard", headers=student.headers).json()["rows"]
    assert [r["user"] for r in before[:2]] == ["alice", "bob"]
    service.start(db, settings)
    run = db.query(PairedRun).one()
    store.record(db, run.id, run.key, outcome("b-faster"))
    rows = client.get("/api/scoreboard", headers=student.headers).json()["rows"]
    assert [(r["user"], r["rank_label"]) for r in rows[:2]] == [("bob", "1"), ("alice", "2")]
    assert rows[0]["tie"] == "ordered by paired runs" or rows[1]["tie"] == "ordered by paired runs"


def test_a_tie_found_by_paired_runs_shares_the_rank(client, db, settings, student,
                                                    other_student):
    board(db, settings, student, other_student)
    service.start(db, settings)
    run = db.query(PairedRun).one()
    store.record(db, run.id, run.key, outcome("tied"))
    rows = client.get("/api/scoreboard", headers=student.headers).json()["rows"]
    assert [(r["user"], r["rank_label"]) for r in rows[:2]] == [("alice", "1="), ("bob", "1=")]
    assert rows[1]["tie"] == "settled by paired runs: tied"


def test_the_control_task_records_what_a_worker_sent(control_env, db, student, other_student):
    board(db, control_env, student, other_student)
    service.start(db, control_env)
    run = db.query(PairedRun).one()
    assert control_tasks.record_paired(run.id, run.key, outcome("a-faster").to_dict())
    db.expire_all()
    assert (run.status, run.outcome, run.rounds) == ("done", "a-faster", 14)
    assert board_notes(db) == ["alice ahead of bob: ordered by paired runs (14 rounds)"]


def test_freezing_the_board_asks_for_the_paired_runs(client, db, settings, student,
                                                     other_student, ta):
    board(db, settings, student, other_student)
    assert client.post("/api/admin/scoreboard/freeze", headers=ta.headers).json()["frozen"]
    assert db.query(PairedRun).count() == 1
    body = client.post("/api/admin/paired-runs", headers=ta.headers).json()
    assert (body["overlapping"], body["sent"], body["known"]) == (1, 0, 1)


def test_a_ta_compares_a_settled_pair_again_and_the_new_outcome_replaces_the_old(
        client, db, settings, student, other_student, ta):
    board(db, settings, student, other_student)
    service.start(db, settings)
    first = db.query(PairedRun).one()
    store.record(db, first.id, first.key, outcome("b-faster"))
    page = client.get("/admin", headers=ta.headers).text
    assert f'hx-post="/partials/admin/paired-runs/{first.id}/again"' in page
    body = client.post(f"/api/admin/paired-runs/{first.id}/again", headers=ta.headers)
    assert body.status_code == 200 and "alice and bob: compared again" in body.json()["message"]
    second = db.query(PairedRun).order_by(PairedRun.id.desc()).first()
    assert second.id != first.id and second.status == "pending" and second.key != first.key
    assert len(paired_messages(settings)) == 2
    rows = client.get("/api/scoreboard", headers=student.headers).json()["rows"]
    assert [r["user"] for r in rows[:2]] == ["bob", "alice"]  # the first outcome, meanwhile
    again = client.post(f"/api/admin/paired-runs/{first.id}/again", headers=ta.headers)
    assert again.status_code == 409 and "pending" in again.json()["detail"]
    store.record(db, second.id, second.key, outcome("tied"))
    rows = client.get("/api/scoreboard", headers=student.headers).json()["rows"]
    assert [(r["user"], r["rank_label"]) for r in rows[:2]] == [("alice", "1="), ("bob", "1=")]


def test_only_a_ta_compares_again_and_only_a_pair_that_exists(client, db, settings, student,
                                                              other_student, ta):
    board(db, settings, student, other_student)
    service.start(db, settings)
    run = db.query(PairedRun).one()
    store.record(db, run.id, run.key, outcome("tied"))
    assert client.post(f"/api/admin/paired-runs/{run.id}/again",
                       headers=student.headers).status_code == 403
    missing = client.post("/api/admin/paired-runs/9999/again", headers=ta.headers)
    assert missing.status_code == 404 and "#9999" in missing.json()["detail"]
    assert db.query(PairedRun).count() == 1


COLUMNS = {"status", "outcome", "reason", "rounds", "gpu_s", "detail", "finished_at", "key",
           "budget_s", "submission_a", "submission_b"}


def writes_paired_rows(path: Path) -> bool:
    """Whether a module builds PairedRun rows or assigns their columns on a name `run`."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "PairedRun":
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and node.attr in COLUMNS and getattr(node.value, "id", "") == "run":
            return True
    return False


def test_only_the_store_writes_paired_rows():
    writers = {p.relative_to(APP).as_posix() for p in APP.rglob("*.py")
               if "PairedRun" in p.read_text() and writes_paired_rows(p)}
    assert writers == {"scoreboard/paired/store.py"}
