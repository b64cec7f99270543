"""A Redis that comes back empty (restarted without persistence) loses every queued message; the
database still says "queued". Every submission must still be judged exactly once, as its first
attempt, within a minute of the restart, and the loss must be said (42
submissions waited 6 minutes on an empty queue, /readyz said ready)."""

from __future__ import annotations

import time

import pytest
import redis

from app.db.session import session_factory
from app.upkeep.broker_watch import loss_notice
from tests.app.utils.processes import wait_for

pytestmark = pytest.mark.slow
SUBMISSIONS = 20
RECOVERY_S = 60.0


def test_queued_work_lost_with_redis_is_judged_once_within_a_minute(deploy):
    live = deploy(sweep_interval_s=1.0, broker_check_s=1.0, broker_loss_wait_s=3.0,
                  queued_timeout_s=1800.0, running_timeout_s=30.0)
    live.workers.kill("judge")  # nobody takes anything: every message waits in Redis
    ids = live.submit_all(live.students(SUBMISSIONS))
    broker = redis.Redis.from_url(live.settings.broker_url)
    wait_for(lambda: broker.llen("cpu") == SUBMISSIONS, 30, "every message queued in Redis")
    live.redis.lose_data()
    restarted = time.monotonic()
    assert redis.Redis.from_url(live.settings.broker_url).llen("cpu") == 0
    live.workers.start("judge")
    wait_for(lambda: live.done() == SUBMISSIONS, RECOVERY_S,
             f"{SUBMISSIONS} verdicts within {RECOVERY_S:g} s of the restart")
    took = time.monotonic() - restarted
    subs, runs = live.submissions(), live.workers.judge_runs()
    recorded = live.workers.verdicts_recorded()
    with session_factory(live.settings.db_url)() as db:
        notice = loss_notice(db)
    print(f"\nbroker loss: {SUBMISSIONS} queued messages lost, all judged {took:.1f} s after "
          f"the restart; {sum(runs.values())} judge runs, {live.workers.dropped()} deliveries "
          f"dropped; notice: {notice.text() if notice else None}")
    assert [s.id for s in subs] == ids
    assert {(s.status, s.verdict, s.attempt) for s in subs} == {("done", "AC", 1)}
    assert sum(runs.values()) == SUBMISSIONS and max(runs.values()) == 1  # each judged once
    assert max(recorded.values()) == 1
    assert notice is not None and notice.resent and notice.count == SUBMISSIONS
