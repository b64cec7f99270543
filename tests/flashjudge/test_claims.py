"""The attempt ledger, on both stores (files under a data dir, keys in Redis): one taker per
attempt even when many processes race, the live attempt as the control side published it, and
the states the sweeper decides by."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashjudge.claims import (
    ClaimState,
    FileLedger,
    Ledger,
    NoLedger,
    RedisLedger,
    attempt_name,
    ledger_for,
)
from tests.app.utils.processes import wait_for

SUBJECT = "sub-7"
FIRST = attempt_name(1, "k1")


@pytest.fixture(params=["files", "redis"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ledger]:
    if request.param == "files":
        yield FileLedger(tmp_path / "claims")
    else:
        yield RedisLedger(request.getfixturevalue("redis_url"))


@pytest.fixture
def fresh(ledger: Ledger) -> Iterator[Ledger]:
    yield ledger
    if isinstance(ledger, RedisLedger):
        for key in ledger.client.scan_iter("flashjudge:*"):
            ledger.client.delete(key)


def test_an_attempt_has_one_taker(fresh: Ledger):
    assert fresh.claim(SUBJECT, FIRST, "worker-a")
    assert not fresh.claim(SUBJECT, FIRST, "worker-b")  # a re-sent copy of the message
    assert fresh.claim(SUBJECT, FIRST, "worker-a")  # its own claim, whose reply was lost
    assert fresh.claim(SUBJECT, attempt_name(2, "k2"), "worker-b")  # the next attempt is new


def race(url_or_dir: str, owner: str, results: multiprocessing.Queue) -> None:
    ledger = ledger_for(None if url_or_dir.startswith("/") else url_or_dir, Path(url_or_dir))
    results.put((owner, ledger.claim("sub-race", "1-k", owner)))


def test_processes_racing_for_one_attempt_have_exactly_one_winner(fresh: Ledger,
                                                                   tmp_path: Path):
    where = fresh.url if isinstance(fresh, RedisLedger) else str(tmp_path)
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    racers = [context.Process(target=race, args=(where, f"w{i}", results)) for i in range(8)]
    for racer in racers:
        racer.start()
    outcomes = [results.get(timeout=60) for _ in racers]
    for racer in racers:
        racer.join(timeout=60)
    assert sum(won for _, won in outcomes) == 1


def test_the_live_attempt_is_what_the_control_side_published_last(fresh: Ledger):
    assert fresh.live(SUBJECT) is None  # nothing published: nobody can tell
    fresh.publish(SUBJECT, 1, "k1")
    first = fresh.live(SUBJECT)
    assert first is not None and first.admits(1, "k1")
    fresh.publish(SUBJECT, 2, "k2")  # a lost judging: attempt 2 now
    live = fresh.live(SUBJECT)
    assert live is not None
    assert not live.admits(1, "k1") and live.admits(2, "k2") and not live.admits(2, "other")
    fresh.retire(SUBJECT)  # verdict recorded
    retired = fresh.live(SUBJECT)
    assert retired is not None and retired.attempt is None and not retired.admits(2, "k2")


def test_states_from_taken_to_reported(fresh: Ledger):
    assert fresh.state(SUBJECT, FIRST).state is ClaimState.UNCLAIMED
    fresh.claim(SUBJECT, FIRST, "worker-a")
    assert fresh.state(SUBJECT, FIRST).state is ClaimState.LOST  # taken, never beat
    fresh.beat(SUBJECT, FIRST, "worker-a", 60)
    assert fresh.state(SUBJECT, FIRST).state is ClaimState.WORKING
    fresh.stop(SUBJECT, FIRST)  # let go without a report (its send failed)
    assert fresh.state(SUBJECT, FIRST).state is ClaimState.LOST
    fresh.beat(SUBJECT, FIRST, "worker-a", 60)
    fresh.reported(SUBJECT, FIRST)
    reported = fresh.state(SUBJECT, FIRST)
    assert reported.state is ClaimState.REPORTED and reported.reported_at is not None


def test_a_dead_workers_alive_mark_expires_by_itself(fresh: Ledger):
    fresh.claim(SUBJECT, FIRST, "worker-a")
    fresh.beat(SUBJECT, FIRST, "worker-a", 0.3)  # then SIGKILLed: no more beats
    wait_for(lambda: fresh.state(SUBJECT, FIRST).state is ClaimState.LOST, 30,
             "the alive mark to expire")


def test_a_beat_restores_a_claim_the_store_lost(fresh: Ledger, tmp_path: Path):
    fresh.claim(SUBJECT, FIRST, "worker-a")
    if isinstance(fresh, RedisLedger):
        fresh.client.delete(f"flashjudge:claim:{SUBJECT}:{FIRST}")  # Redis restarted, empty
    else:
        (tmp_path / "claims" / "claim" / f"{SUBJECT}.{FIRST}").unlink()
    fresh.beat(SUBJECT, FIRST, "worker-a", 60)
    assert not fresh.claim(SUBJECT, FIRST, "worker-b")


def test_old_file_records_are_pruned(tmp_path: Path):
    ledger = FileLedger(tmp_path / "claims")
    ledger.claim(SUBJECT, FIRST, "worker-a")
    ledger.retire(SUBJECT)
    assert ledger.prune(3600) == 0
    assert ledger.prune(-1) == 2 and ledger.state(SUBJECT, FIRST).state is ClaimState.UNCLAIMED


def test_the_store_follows_the_broker(tmp_path: Path):
    assert isinstance(ledger_for(None, tmp_path), FileLedger)
    assert isinstance(ledger_for("redis://127.0.0.1:6379/3", tmp_path), RedisLedger)
    other = ledger_for("amqp://guest@localhost//", tmp_path)
    assert isinstance(other, NoLedger) and other.claim(SUBJECT, FIRST, "a")
    assert other.state(SUBJECT, FIRST).state is ClaimState.UNKNOWN


def test_a_send_is_marked_and_the_mark_read_back_in_one_call(fresh: Ledger):
    """The broker watch reads every queued attempt's mark at once."""
    second = attempt_name(2, "k2")
    assert fresh.sent_at([(SUBJECT, FIRST), (SUBJECT, second)]) == [None, None]
    fresh.mark_sent(SUBJECT, FIRST, at=1234.5)
    assert fresh.sent_at([(SUBJECT, FIRST), (SUBJECT, second)]) == [1234.5, None]
    assert fresh.sent_at([]) == []
    assert NoLedger().sent_at([(SUBJECT, FIRST)]) is None  # a store that cannot tell
