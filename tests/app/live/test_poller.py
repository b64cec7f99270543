"""The poller on both databases: each change of a watched submission is loaded ONCE however many
streams watch it; queued pages learn their position; scoreboard changes are coalesced."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from app.changefeed.changes import SCOREBOARD, note_change
from app.core.config import Settings
from app.judging import recording
from app.live import poller as poller_module
from app.live.hub import Hub, Mailbox
from app.live.poller import GONE, Poller
from app.wiring import wired_sessions
from tests.app.utils.factories import judged_result, make_submission

WATCHERS = 50


def poller_for(settings: Settings) -> Poller:
    return Poller(settings, Hub(), wired_sessions(settings.db_url))


def drain(boxes: list[Mailbox]) -> list[dict[str, Any] | None]:
    """What each mailbox holds now (None: nothing)."""
    return [box.next_nowait() for box in boxes]


def scenario(steps: Callable[[], Any]) -> Any:
    return asyncio.run(steps())


def test_each_change_is_loaded_once_for_every_watcher(db, settings, student):
    watched, other = make_submission(db, student), make_submission(db, student)
    poller = poller_for(settings)

    async def steps() -> None:
        boxes = [poller.hub.subscribe(f"submission:{watched.id}") for _ in range(WATCHERS)]
        await poller.poll()  # the first state of every new watcher: one load
        assert poller.stats.snapshots == 1
        assert {s["status"] for s in drain(boxes)} == {"queued"}
        test = judged_result(1, 0.5)["tests"][0]
        recording.record_progress(db, watched.id, 1, {"type": "test-done", "test": test})
        recording.record_progress(db, other.id, 1, {"type": "compile", "ok": True})
        await poller.poll()  # two changes, one of them watched: one load
        assert poller.stats.snapshots == 2 and poller.stats.changes == 2
        states = drain(boxes)
        assert all(s["status"] == "running" and s["tests"][0]["id"] == "t01" for s in states)
        assert states[0]["error"] == ""  # the TA view: streams cut it per viewer
        await poller.poll()  # nothing changed: nothing loaded, nothing sent
        assert poller.stats.snapshots == 2 and drain(boxes) == [None] * WATCHERS

    scenario(steps)


def test_a_watched_submission_that_goes_away_says_so(db, settings, student):
    sub = make_submission(db, student)
    poller = poller_for(settings)

    async def steps() -> None:
        box = poller.hub.subscribe(f"submission:{sub.id}")
        await poller.poll()
        assert box.next_nowait()["status"] == "queued"
        db.delete(sub)
        db.commit()
        await poller.poll()
        assert box.next_nowait() == {GONE: True}

    scenario(steps)


def test_a_queued_page_learns_its_position_when_work_ahead_starts(db, settings, student,
                                                                  other_student):
    ahead, mine = make_submission(db, other_student), make_submission(db, student)
    poller = poller_for(settings)
    poller.queue_at_most_s = 0

    async def steps() -> None:
        box = poller.hub.subscribe(f"submission:{mine.id}")
        await poller.poll()
        assert box.next_nowait()["queue_position"] == 1
        recording.record_progress(db, ahead.id, 1, {"type": "compile", "ok": True})
        await poller.poll()  # only `ahead` changed; `mine` is told its new position
        update = box.next_nowait()
        assert update is not None and set(update) == {"queue_position", "waiting"}
        assert update["queue_position"] == 0
        assert poller.stats.snapshots == 1

    scenario(steps)


def test_scoreboard_changes_are_coalesced_to_one_event_per_interval(db, settings):
    poller = poller_for(settings)

    async def steps() -> None:
        box = poller.hub.subscribe(SCOREBOARD)
        await poller.poll()
        for _ in range(3):
            note_change(db, SCOREBOARD)
            db.commit()
        await poller.poll()
        first = box.next_nowait()
        note_change(db, SCOREBOARD)
        db.commit()
        await poller.poll()  # within the interval: held back
        assert box.next_nowait() is None
        poller.scoreboard_every_s = 0
        await poller.poll()  # the held change goes out with the next poll
        second = box.next_nowait()
        assert first is not None and second is not None
        assert second["seq"] == first["seq"] + 1 == poller.board_seq

    scenario(steps)


def failing_once(monkeypatch, error: Exception) -> None:
    """The next state read fails with `error` (a fault injected, the rest is real)."""
    real = poller_module.full_detail
    calls = []

    def detail(*args: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 1:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(poller_module, "full_detail", detail)


def test_a_poll_that_fails_reads_the_same_changes_again(db, settings, student, monkeypatch):
    sub = make_submission(db, student)
    poller = poller_for(settings)

    async def steps() -> None:
        box = poller.hub.subscribe(f"submission:{sub.id}")
        await poller.poll()
        box.next_nowait()
        recording.record_progress(db, sub.id, 1, {"type": "compile", "ok": True})
        failing_once(monkeypatch, OperationalError("SELECT", {}, Exception("server closed")))
        with pytest.raises(OperationalError):
            await poller.poll()
        await poller.poll()
        assert box.next_nowait()["status"] == "running"

    scenario(steps)


def test_one_unreadable_state_does_not_stop_the_others(db, settings, student, monkeypatch):
    bad, good = make_submission(db, student), make_submission(db, student)
    poller = poller_for(settings)

    async def steps() -> None:
        boxes = [poller.hub.subscribe(f"submission:{s.id}") for s in (bad, good)]
        failing_once(monkeypatch, ValueError("a row no page can show"))
        await poller.poll()
        assert drain(boxes)[1]["status"] == "queued"
        await poller.poll()  # not read again every poll while nothing changed...
        assert poller.stats.snapshots == 2 and drain(boxes) == [None, None]
        recording.record_progress(db, bad.id, 1, {"type": "compile", "ok": True})
        await poller.poll()  # ...but once it changes
        assert drain(boxes)[0]["status"] == "running"

    scenario(steps)
