"""The per-student submission interval holds under real concurrency (both databases)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import func, select

from app.core.errors import UserError
from app.db.models import Submission, User
from app.results.detail import detail, queue_facts
from app.submissions.intake import create_submission
from app.submissions.uploads import SourceFile
from app.wiring import wired_sessions
from tests.app.utils.factories import live_worker, make_submission

SOURCE = [SourceFile("hw4.c", b"int main(void) { return 0; }\n")]


def test_ten_concurrent_submissions_of_one_student_store_exactly_one(settings, db, student):
    """Before: all ten checked the interval before any was stored, and two got in."""
    spaced = settings.model_copy(update={"submit_interval_s": 300})
    barrier = threading.Barrier(10)

    def submit(_: int) -> int:
        with wired_sessions(spaced.db_url)() as own:
            user = own.get(User, student.id)
            assert user is not None
            barrier.wait()
            try:
                create_submission(own, user, "c-program", SOURCE, spaced)
            except UserError as exc:
                return exc.status
            return 202

    with ThreadPoolExecutor(10) as pool:
        codes = list(pool.map(submit, range(10)))
    assert sorted(codes) == [202] + [429] * 9
    db.expire_all()
    assert db.scalar(select(func.count()).select_from(Submission)) == 1


def test_the_refusal_says_how_long_to_wait(client, settings, student):
    client.app.state.settings = settings.model_copy(update={"submit_interval_s": 300})
    files = [("files", ("hw4.c", SOURCE[0].content))]
    first = client.post("/api/submissions", headers=student.headers,
                        data={"language": "c-program"}, files=files)
    assert first.status_code == 202
    second = client.post("/api/submissions", headers=student.headers,
                         data={"language": "c-program"}, files=files)
    assert second.status_code == 429 and "wait 300 s" in second.json()["detail"]
    assert 290 <= int(second.headers["Retry-After"]) <= 300


def test_queue_facts_say_what_the_detail_says(settings, db, student, ta):
    """The live pages' refresh of queued submissions (app/live/poller.py) agrees with detail."""
    live_worker(db)  # c-program is judged; CUDA waits for a GPU worker
    subs = [make_submission(db, student, language=lang) for lang in (
        "c-program", "cuda-program", "c-program", "cuda-program", "c-program")]
    make_submission(db, student, status="running")
    viewer = db.get(User, ta.id)
    facts = queue_facts(db, {s.id for s in subs[1:]}, settings)
    assert set(facts) == {s.id for s in subs[1:]}
    for sub in subs[1:]:
        body = detail(db, sub, viewer, settings)
        assert facts[sub.id] == {"queue_position": body["queue_position"],
                                 "waiting": body["waiting"]}
    assert facts[subs[3].id]["queue_position"] == 1 and facts[subs[3].id]["waiting"]
