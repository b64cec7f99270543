"""The node's timing lock (worker/running/nodelock.py), with real processes on real flock(2):
a paired round never overlaps another worker's test run, test runs overlap each other, a
stream of test runs cannot keep a round out, and a round's own runs do not wait for it."""

from __future__ import annotations

import dataclasses
import fcntl
import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.worker.hostile_corpus import load_case
from worker.pipeline import JudgeEvent, JudgeRequest, judge
from worker.running.nodelock import NodeLock, held_alone
from worker.timing.paired import PairedConfig, compare
from worker.timing.sample import Sample

SPAWN = multiprocessing.get_context("spawn")


def _runs(directory: str, log: str, stop: Any, running: Any = None) -> None:
    """A worker's test runs, back to back, each interval written down (CLOCK_MONOTONIC is one
    clock for every process of the machine); `running` is set once the first run is done."""
    lock = NodeLock(Path(directory))
    with open(log, "w") as out:
        while not stop.is_set():
            with lock.shared():
                began = time.monotonic_ns()
                os.sched_yield()
                out.write(f"{began} {time.monotonic_ns()}\n")
            if running is not None:
                running.set()


def _rounds(directory: str, log: str, count: int) -> None:
    lock = NodeLock(Path(directory))
    with open(log, "w") as out:
        for _ in range(count):
            with lock.alone():
                began = time.monotonic_ns()
                os.sched_yield()
                out.write(f"{began} {time.monotonic_ns()}\n")


def _together(directory: str, barrier: Any) -> None:
    with NodeLock(Path(directory)).shared():
        barrier.wait(timeout=60)  # broken unless the other run holds the lock at the same time


def intervals(path: Path) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in (line.split() for line in path.read_text().splitlines())]


@pytest.mark.timeout(120)
def test_rounds_never_overlap_the_test_runs_of_other_workers_and_are_not_kept_out(tmp_path):
    stop = SPAWN.Event()
    running = [SPAWN.Event() for _ in range(2)]
    runners = [SPAWN.Process(target=_runs,
                             args=(str(tmp_path), str(tmp_path / f"runs{i}"), stop, running[i]))
               for i in range(2)]
    for p in runners:
        p.start()
    # both workers running before the rounds begin (a spawned process's imports take seconds on
    # a loaded machine: the rounds once finished before either worker's first run)
    assert all(event.wait(60) for event in running)
    rounds = SPAWN.Process(target=_rounds, args=(str(tmp_path), str(tmp_path / "rounds"), 25))
    rounds.start()
    rounds.join(90)  # two workers running tests without a pause do not keep the rounds out
    stop.set()
    for p in runners:
        p.join(30)
    assert rounds.exitcode == 0 and all(p.exitcode == 0 for p in runners)
    held = intervals(tmp_path / "rounds")
    runs = intervals(tmp_path / "runs0") + intervals(tmp_path / "runs1")
    assert len(held) == 25 and len(runs) > 25
    overlapping = [(r, t) for r in held for t in runs if t[0] < r[1] and r[0] < t[1]]
    assert overlapping == []


@pytest.mark.timeout(120)
def test_test_runs_of_two_workers_hold_the_node_at_once(tmp_path):
    barrier = SPAWN.Barrier(2)
    both = [SPAWN.Process(target=_together, args=(str(tmp_path), barrier)) for _ in range(2)]
    for p in both:
        p.start()
    for p in both:
        p.join(90)
    assert [p.exitcode for p in both] == [0, 0]


def test_a_rounds_own_runs_do_not_wait_for_it(tmp_path):
    lock = NodeLock(tmp_path)
    assert not held_alone()
    with lock.alone():
        assert held_alone()
        with lock.shared():  # the round's own test runner: no deadlock
            pass
    assert not held_alone()
    with lock.shared():
        assert not held_alone()


def room_is_locked(directory: Path) -> bool:
    fd = os.open(directory / "timing.room", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_every_run_of_a_paired_comparison_runs_with_the_node_held_alone(tmp_path):
    lock = NodeLock(tmp_path)
    seen: list[bool] = []

    def runner(test_id: str) -> Sample:
        seen.append(held_alone() and room_is_locked(tmp_path))
        return Sample(seconds=0.1, passed=True)

    result = compare(runner, runner, ["t01", "t02"], PairedConfig(budget_s=3.0), lock)
    assert result.rounds and len(seen) == 4 * len(result.rounds) and all(seen)
    assert not room_is_locked(tmp_path)  # let go after the last round


def test_a_verdict_pass_holds_the_node_through_all_its_tests(engine_cache, judge_config,
                                                              tmp_path):
    """Shared, once for the pass: a paired round on another GPU waits for the whole pass (a
    judging waits for one round at most, not one per test)."""
    lock = NodeLock(tmp_path / "locks")
    held: list[bool] = []

    def listen(event: JudgeEvent) -> None:
        if event.kind == "test-start":
            held.append(room_is_locked(tmp_path / "locks"))

    files = load_case("correct-seq").files
    result = judge(JudgeRequest("c-program", files, "hw4-mini", ["t01", "t02"]), engine_cache,
                   on_event=listen, config=dataclasses.replace(judge_config, node_lock=lock))
    assert result.passed == 2 and held == [True, True]
    assert not room_is_locked(tmp_path / "locks")
