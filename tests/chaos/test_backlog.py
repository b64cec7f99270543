"""A backlog longer than the queued timeout: every submission is judged exactly once, as its first
attempt, and none ends SE (red-team item 4: with the old sweeper 25 of 40 ended SE after 90 judge
runs); and the sweeper no longer sends waiting work again while its message is in the broker
(one message in flight per attempt, where it used to send a copy per pass)."""

from __future__ import annotations

from collections import Counter

import pytest
import redis

from tests.app.utils.processes import wait_for

pytestmark = pytest.mark.slow
SUBMISSIONS = 40
QUEUED_TIMEOUT_S = 4.0  # the backlog is ~40 judgings of ~1 s: many times longer


def test_a_backlog_past_the_queued_timeout_is_judged_once_each(deploy):
    live = deploy(sweep_interval_s=1.0, queued_timeout_s=QUEUED_TIMEOUT_S,
                  running_timeout_s=30.0, max_attempts=3)
    ids = live.submit_all(live.students(SUBMISSIONS))
    wait_for(lambda: live.done() == SUBMISSIONS, 300, f"{SUBMISSIONS} verdicts")
    broker = redis.Redis.from_url(live.settings.broker_url)
    wait_for(lambda: broker.llen("cpu") == 0, 120, "the re-sent copies to be consumed")
    subs = live.submissions()
    runs = live.workers.judge_runs()
    dropped = live.workers.dropped()
    print(f"\nbacklog: {SUBMISSIONS} submissions, queued timeout {QUEUED_TIMEOUT_S:g} s, "
          f"verdicts {dict(Counter(s.verdict for s in subs))}, {sum(runs.values())} judge runs "
          f"({sum(runs.values()) - SUBMISSIONS} beyond one per submission), "
          f"{dropped} re-sent deliveries dropped unjudged")
    assert [s.id for s in subs] == ids
    assert {(s.status, s.verdict, s.attempt) for s in subs} == {("done", "AC", 1)}
    assert sum(runs.values()) == SUBMISSIONS and max(runs.values()) == 1
    assert dropped == 0  # no copies: every message the broker held was a wanted one
