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
from app.live import poller as poller_module
from app.live.hub import Hub, Mailbox
from app.live.poller import GONE, Poller
from app.submissions import recording
from app.wiring import wired_sessions
from tests.app.utils.factories import judged_result, make_submission

WATCHERS = 50


def poller_for(settings: Settings) -> Poller:
    return Poller(settings, Hub(), wired_sessions(settings.db_url))


def drain(boxes: list[Mailbox]) -> list[dict[str, Any] | None]:
    """What each mailbox holds now (None: nothing)."""
    return [box.next_nowait() for box in boxes]


def held(box: Mailbox) -> dict[str, Any]:
    """What the mailbox holds now, which must be something."""
    update = box.next_nowait()
    assert update is not None, "the mailbox holds nothing"
    return update


def scenario(steps: Callable[[], Any]) -> Any:
    return asyncio.run(steps())


def test_each_change_is_loaded_once_for_every_watcher(db, settings, student):
    watched, other = make_submission(db, student), make_submission(db, student)
    poller = poller_for(settings)

    async def steps() -> None:
        boxes = [poller.hub.subscribe(f"submission:{watched.id}") for _ in range(WATCHERS)]
        await poller.poll()  # the first state of every new watcher: one load
        assert poller.stats.snapshots == 1
        assert {held(b)["status"] for b in boxes} == {"queued"}
        test = judged_result(1, 0.5)["tests"][0]
        recording.record_progress(db, watched.id, 1, {"type": "test-done", "test": test})
        recording.record_progress(db, other.id, 1, {"type": "compile", "ok": True})
        await poller.poll()  # two changes, one of them watched: one load
        assert poller.stats.snapshots == 2 and poller.stats.changes == 2
        states = [held(b) for b in boxes]
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
        assert held(box)["status"] == "queued"
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
        assert held(box)["queue_position"] == 1
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
        assert held(box)["status"] == "running"

    scenario(steps)


def test_one_unreadable_state_does_not_stop_the_others(db, settings, student, monkeypatch):
    bad, good = make_submission(db, student), make_submission(db, student)
    poller = poller_for(settings)

    async def steps() -> None:
        boxes = [poller.hub.subscribe(f"submission:{s.id}") for s in (bad, good)]
        failing_once(monkeypatch, ValueError("a row no page can show"))
        await poller.poll()
        good_state = drain(boxes)[1]  # both boxes read: the bad one's may hold a partial update
        assert good_state is not None and good_state["status"] == "queued"
        await poller.poll()  # not read again every poll while nothing changed...
        assert poller.stats.snapshots == 2 and drain(boxes) == [None, None]
        recording.record_progress(db, bad.id, 1, {"type": "compile", "ok": True})
        await poller.poll()  # ...but once it changes
        bad_state = drain(boxes)[0]
        assert bad_state is not None and bad_state["status"] == "running"

    scenario(steps)


def test_the_boards_are_made_ready_before_the_pages_hear_of_a_move_and_renewed_without_one(
        db, settings):
    """The hook (app/scoreboard/cache.py's refresh) runs before the scoreboard event is
    published, so a page's refetch gets the new board; and every BOARDS_RENEW_S without a move
    too (a move the feed missed is read within that)."""
    heard: list[str] = []
    poller = Poller(settings, Hub(), wired_sessions(settings.db_url))
    box = poller.hub.subscribe(SCOREBOARD)

    async def refreshed() -> None:
        heard.append("published" if box.next_nowait() is not None else "refreshed first")

    poller.on_board_move = refreshed
    poller.scoreboard_every_s = 0

    async def steps() -> None:
        await poller.poll()  # the first poll: renewed, nothing to publish
        note_change(db, SCOREBOARD)
        db.commit()
        await poller.poll()
        assert heard == ["refreshed first", "refreshed first"]
        assert box.next_nowait() is not None  # and then the pages were told
        await poller.poll()  # no move, within BOARDS_RENEW_S: nothing to do
        assert len(heard) == 2
        poller_module.BOARDS_RENEW_S, saved = 0.0, poller_module.BOARDS_RENEW_S
        try:
            await poller.poll()  # no move, but due: renewed
        finally:
            poller_module.BOARDS_RENEW_S = saved
        assert len(heard) == 3

    scenario(steps)
