"""Messages lost with the broker are noticed and sent again once, and the TA page and /readyz
say so (issue 20 item 3: after a Redis restart without persistence 42 submissions sat "queued"
on an empty queue for 6 minutes while /readyz said ready). The ledger and broker are each
backend's real ones; a lost broker is a flushed Redis database, or the embedded broker's
message files and ledger deleted."""

from __future__ import annotations

import pytest

from app.db.models import Submission
from app.judging import dispatch
from app.judging.broker_watch import BrokerWatch
from app.judging.sweeper import sweep
from flashjudge.claims import attempt_name, submission_subject
from tests.app.judging.test_sweeper import age, unsent
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.broker import lose_broker_data, messages_waiting

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
