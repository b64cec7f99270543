"""Chaos: 100 submissions judged while the judge worker, the control worker and Redis are killed
at random points and restarted. Every submission ends with exactly one verdict (AC: none SE),
and no attempt is ever judged twice.

The kills are tied to progress (when the number of finished submissions crosses random
thresholds), so they land mid-judging on any machine; FLASHJUDGE_CHAOS_SEED replays a schedule.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field

import pytest

from tests.app.utils.processes import wait_for
from tests.chaos.conftest import Live

pytestmark = pytest.mark.slow
SUBMISSIONS = 100
KILLS = {"judge": 4, "control": 3, "redis": 3}  # SIGKILLs of each part, then a restart
OUTAGE_S = (0.2, 2.0)  # how long a killed part stays down


@dataclass
class Monkey:
    """SIGKILLs a part when progress crosses its threshold, restarts it after an outage."""

    live: Live  # the deployment under attack
    rng: random.Random  # the schedule's randomness
    plan: list[tuple[int, str]] = field(default_factory=list)  # (finished count, part)
    restarts: list[tuple[float, str]] = field(default_factory=list)  # (due, part)
    survived: dict[str, int] = field(default_factory=dict)  # kills done per part

    def __post_init__(self) -> None:
        parts = [part for part, count in KILLS.items() for _ in range(count)]
        self.rng.shuffle(parts)
        thresholds = sorted(self.rng.sample(range(2, SUBMISSIONS - 5), len(parts)))
        self.plan = list(zip(thresholds, parts, strict=True))

    def tick(self) -> None:
        finished = self.live.done()
        while self.plan and self.plan[0][0] <= finished:
            _, part = self.plan.pop(0)
            self.kill(part)
        for due, part in [r for r in self.restarts if r[0] <= time.monotonic()]:
            self.restarts.remove((due, part))
            self.start(part)

    def kill(self, part: str) -> None:
        if part == "redis":
            self.live.redis.kill()
        else:
            self.live.workers.kill(part)
        self.survived[part] = self.survived.get(part, 0) + 1
        self.restarts.append((time.monotonic() + self.rng.uniform(*OUTAGE_S), part))

    def start(self, part: str) -> None:
        if part == "redis":
            self.live.redis.start()
        else:
            self.live.workers.start(part)

    def finished(self) -> bool:
        """All judged, every kill done and every part back up."""
        self.tick()
        return not self.plan and not self.restarts and self.live.done() == SUBMISSIONS


def test_every_submission_gets_exactly_one_verdict_whatever_dies(deploy):
    seed = int(os.environ.get("FLASHJUDGE_CHAOS_SEED", "20261201"))
    live = deploy(sweep_interval_s=1.0, queued_timeout_s=15.0, running_timeout_s=5.0)
    monkey = Monkey(live, random.Random(seed))
    ids = live.submit_all(live.students(SUBMISSIONS))
    wait_for(monkey.finished, 480, f"{SUBMISSIONS} verdicts under chaos (seed {seed})")
    subs = live.submissions()
    runs = live.workers.judge_runs()
    recorded = live.workers.verdicts_recorded()
    print(f"\nchaos (seed {seed}): {len(subs)} submissions, kills survived {monkey.survived}, "
          f"verdicts {dict(Counter(s.verdict for s in subs))}, {sum(runs.values())} judge runs "
          f"({sum(runs.values()) - SUBMISSIONS} beyond one per submission, "
          f"{sum(n - 1 for n in runs.values())} of an attempt already judged), "
          f"{live.workers.dropped()} deliveries dropped, "
          f"highest attempt {max(s.attempt for s in subs)}")
    assert [s.id for s in subs] == ids
    assert {(s.status, s.verdict) for s in subs} == {("done", "AC")}, [
        (s.id, s.verdict, s.error) for s in subs if s.verdict != "AC"]
    assert [key for key, count in runs.items() if count > 1] == []  # no attempt judged twice
    assert all(runs[str(s.id), s.attempt] == 1 for s in subs)  # the verdict's own judging
    assert max(recorded.values()) == 1  # no verdict recorded twice
    assert {(s.failures, s.lost <= 1) for s in subs} == {(0, True)}  # kills are not failures
    assert monkey.survived == KILLS
