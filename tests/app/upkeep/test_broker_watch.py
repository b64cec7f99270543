"""Messages lost with the broker are noticed and sent again once, and the TA page and /readyz
say so (after a Redis restart without persistence 42 submissions sat "queued"
on an empty queue for 6 minutes while /readyz said ready). The ledger and broker are each
backend's real ones; a lost broker is a flushed Redis database, or the embedded broker's
message files and ledger deleted."""

from __future__ import annotations

from functools import partial

import pytest

from app.db.models import Submission
from app.submissions import dispatch, recording
from app.submissions.dispatch import control_app
from app.upkeep.broker_watch import BrokerWatch
from app.upkeep.sweeper import sweep
from flashjudge.claims import attempt_name, submission_subject
from flashjudge.contract import Queue, Task
from tests.app.pages.test_pages import HTML, login
from tests.app.upkeep.test_sweeper import age, unsent
from tests.app.utils.broker import lose_broker_data, messages_waiting
from tests.app.utils.factories import judged_result
from worker.celery_adapter.claiming import Claims, Work

WORKER = "node1:4242:abcd1234"


@pytest.fixture
def waiting(db, settings, student) -> list[Submission]:
    subs = [unsent(db, student) for _ in range(3)]
    assert len(sweep(db, settings).resent) == 3  # sent, and their sends marked
    for sub in subs:
        age(db, sub, sent_at=60)
    return subs


def test_messages_lost_with_the_broker_are_sent_again_once(db, settings, ta, client, waiting):
    lose_broker_data(settings)
    assert messages_waiting(settings) == 0
    watch = BrokerWatch(settings.model_copy(update={"broker_loss_wait_s": 0.0}))
    assert watch.check(db) == 3 and messages_waiting(settings) == 3
    assert watch.check(db) == 0 and messages_waiting(settings) == 3  # once: no more copies
    for sub in waiting:
        live = dispatch.ledger(settings).live(submission_subject(sub.id))
        assert live is not None and live.admits(1, sub.job_key)  # the same attempt
    said = client.get("/api/admin/status", headers=ta.headers).json()["broker_loss"]
    assert said.startswith("broker lost 3 queued message(s) at ") and said.endswith("; re-sent")
    ready = client.get("/readyz").json()["checks"]["messages"]
    assert ready == {"ok": True, "detail": said}
    login(client, ta)
    assert said in client.get("/admin", headers=HTML).text  # the TA page's banner


def test_a_lost_send_waits_until_no_worker_holds_it(db, settings, client, waiting):
    lose_broker_data(settings)
    patient = BrokerWatch(settings.model_copy(update={"broker_loss_wait_s": 3600.0}))
    assert patient.check(db) == 0 and messages_waiting(settings) == 0
    ready = client.get("/readyz").json()["checks"]["messages"]
    assert not ready["ok"] and "re-sending them once no worker holds them" in ready["detail"]
    held = waiting[0]  # a worker was judging it: its next heartbeat claims it again
    ledger, name = dispatch.ledger(settings), attempt_name(held.attempt, held.job_key)
    assert ledger.claim(submission_subject(held.id), name, WORKER)
    ledger.beat(submission_subject(held.id), name, WORKER, 60)
    eager = BrokerWatch(settings.model_copy(update={"broker_loss_wait_s": 0.0}))
    assert eager.check(db) == 2 and messages_waiting(settings) == 2  # not the held one
    assert ledger.sent_at([(submission_subject(held.id), name)]) != [None]  # in hand: marked
    assert client.get("/readyz").json()["checks"]["messages"]["ok"]


def test_a_result_lost_with_the_broker_is_sent_again_and_not_judged_again(db, settings,
                                                                          waiting):
    """A worker judged one while the control worker was down; the broker lost its queued result
    and the attempt's claim. At its next heartbeat the worker takes the claim back (reported)
    and sends its result again, so the broker watch re-sends only the two never judged; the
    result is recorded once, however many copies arrive."""
    held = waiting[0]
    ledger = lambda: dispatch.ledger(settings)  # noqa: E731 - the worker's view of it
    claims = Claims(ledger, alive_ttl_s=60)
    work = Work(submission_subject(held.id), held.attempt, held.job_key)
    assert claims.refusal(work) is None
    body = judged_result(3, 0.5, 3)
    resend = partial(control_app(settings).send_task, str(Task.RECORD_RESULT),
                     args=[held.id, held.attempt, body, held.job_key], queue=str(Queue.CONTROL))
    with claims.holding(work):
        resend()
        claims.reported(resend=resend)
    assert messages_waiting(settings, "control") == 1  # no control worker to take it
    lose_broker_data(settings)
    assert messages_waiting(settings, "control") == 0
    claims.beat()  # the worker's heartbeat
    assert messages_waiting(settings, "control") == 1  # its result, sent again
    watch = BrokerWatch(settings.model_copy(update={"broker_loss_wait_s": 0.0}))
    assert watch.check(db) == 2 and messages_waiting(settings) == 2  # not the judged one
    assert recording.record_result(db, settings, held.id, held.attempt, body, held.job_key)
    assert not recording.record_result(db, settings, held.id, held.attempt, body, held.job_key)
    db.refresh(held)
    assert (held.status, held.passed, held.attempt) == ("done", 3, 1)
    claims.beat()
    assert claims.outbox.sent == {}  # the control side has it: forgotten
    assert watch.check(db) == 0


def test_a_copy_of_a_result_recorded_before_the_loss_settles_the_worker_again(db, settings,
                                                                              waiting):
    """Recorded, then the broker lost everything (the ledger's "done" too): the worker's copy
    is ignored as stale and says "done" in the ledger again, so the worker forgets it."""
    held = waiting[0]
    claims = Claims(lambda: dispatch.ledger(settings), alive_ttl_s=60)
    work = Work(submission_subject(held.id), held.attempt, held.job_key)
    assert claims.refusal(work) is None
    body = judged_result(3, 0.5, 3)
    sent: list[int] = []
    with claims.holding(work):
        claims.reported(resend=lambda: sent.append(1))
    assert recording.record_result(db, settings, held.id, held.attempt, body, held.job_key)
    lose_broker_data(settings)
    claims.beat()
    assert sent == [1]  # the worker cannot tell it arrived: sent again
    assert not recording.record_result(db, settings, held.id, held.attempt, body, held.job_key)
    claims.beat()
    assert claims.outbox.sent == {} and sent == [1]
