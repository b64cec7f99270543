"""Which languages the live workers judge: from heartbeats, within the live window."""

from __future__ import annotations

from datetime import timedelta

from app.db.models import WorkerStatus, utcnow
from app.submissions import capacity, recording
from tests.app.utils.factories import live_worker, make_submission


def test_no_worker_means_nothing_can_be_judged_and_says_so(db, settings):
    can = capacity.current(db, settings)
    assert can.available == []
    assert can.why_not("cuda-program") == (
        "no GPU worker is connected: cuda-program cannot be judged now "
        "(languages that can be judged now: none: no worker is connected)")


def test_a_heartbeat_names_what_its_worker_judges(db, settings):
    recording.record_worker(db, {"hostname": "cpu@laptop", "gpu": "cpu", "queues": "cpu",
                                 "languages": ["c-program"]})
    can = capacity.current(db, settings)
    assert can.available == ["c-program"]
    assert can.get("c-program").workers == ("cpu@laptop",)
    assert "no GPU worker is connected" in can.why_not("cuda-kernel")
    assert can.why_not("cuda-kernel").endswith("(languages that can be judged now: c-program)")


def test_a_worker_silent_for_three_heartbeats_is_not_counted(db, settings):
    live_worker(db, "gpu0@node", ("cuda-program", "cuda-kernel"), gpu="NVIDIA H100")
    assert capacity.current(db, settings).available == ["cuda-program", "cuda-kernel"]
    db.get(WorkerStatus, "gpu0@node").last_seen = utcnow() - timedelta(
        seconds=settings.worker_live_s + 1)
    db.commit()
    assert capacity.current(db, settings).available == []


def test_an_older_worker_without_languages_is_read_from_its_queues(db, settings):
    recording.record_worker(db, {"hostname": "old@gpu", "gpu": "NVIDIA A100", "queues": "gpu"})
    recording.record_worker(db, {"hostname": "old@cpu", "gpu": "cpu", "queues": "gpu,cpu"})
    can = capacity.current(db, settings)
    assert can.get("cuda-program").workers == ("old@gpu",)  # a gpu queue without a GPU: no CUDA
    assert can.get("c-program").workers == ("old@cpu",)


def test_queued_work_no_live_worker_can_judge_is_stranded(db, settings, student):
    live_worker(db)
    make_submission(db, student, language="cuda-kernel")
    make_submission(db, student, language="c-program")
    can = capacity.current(db, settings)
    assert capacity.stranded(db, can) == {"cuda-kernel": 1}
    assert capacity.waiting_message(can, "cuda-kernel") == (
        "waiting: no GPU worker is connected; it is judged as soon as one is "
        "(a TA can cancel it)")
    assert capacity.waiting_message(can, "c-program") is None
