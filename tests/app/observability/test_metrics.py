"""/metrics: Prometheus text read from the real database and broker at scrape time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import delete

from app.core.config import Settings
from app.db.models import JudgedTest, Submission, User, WorkerStatus
from app.db.session import session_scope
from app.main import create_app
from app.submissions import recording
from app.submissions.dispatch import control_app
from tests.app.observability.live_service import make_settings
from tests.app.utils.feedback_payloads import judge_result


def scrape(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(sample name, sorted labels) -> value, from a real scrape."""
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(response.text)
            for s in family.samples}


def submission(user: User, verdict: str | None, seconds: float | None = None,
               worker: dict[str, Any] | None = None) -> Submission:
    done = verdict is not None
    parts = {"compile": {"ok": verdict != "CE", "seconds": 0.25}, "overhead_s": 0.5,
             "prepare_s": 0.0}
    result = {"score": 60, **parts, **({"worker": worker} if worker else {})} if done else None
    return Submission(user_id=user.id, language="cuda-program", suite="hw4",
                      status="done" if done else "queued", verdict=verdict, result=result,
                      total_time=seconds)


@pytest.fixture
def judged(settings: Settings) -> Iterator[None]:
    """Five submissions: AC on gpu0 (3 s), WA on gpu1 (40 s), a CE whose result does not say
    who judged it (0.75 s from its parts), and two queued."""
    with session_scope(settings.db_url) as db:
        user = User(username="metrics-student", role="student")
        db.add(user)
        db.flush()
        db.add_all([
            submission(user, "AC", 2.5, {"hostname": "gpu0-7", "gpu": "H100", "seconds": 3.0}),
            submission(user, "WA", 30.0, {"hostname": "gpu1-8", "gpu": "H100", "seconds": 40.0}),
            submission(user, "CE", 0.0),
            submission(user, None),
            submission(user, None),
            WorkerStatus(hostname="gpu0-7", gpu="H100", busy=True,
                         last_seen=datetime(2026, 11, 22, 9, 0, 0)),
            WorkerStatus(hostname="gpu0-job4812@gpu07", gpu="H100", busy=False,
                         last_seen=datetime(2026, 11, 22, 9, 0, 0),
                         slurm={"job_id": "4812", "node": "gpu07", "partition": "gpu",
                                "gpus": ["2"], "end_time": 1795828173.0}),
        ])
    yield
    with session_scope(settings.db_url) as db:
        db.execute(delete(WorkerStatus))
        db.execute(delete(Submission))
        db.execute(delete(User))


def test_metrics_count_submissions_by_verdict(client: TestClient, judged: None) -> None:
    samples = scrape(client)
    assert samples[("flashjudge_submissions", (("status", "done"), ("verdict", "AC")))] == 1
    assert samples[("flashjudge_submissions", (("status", "done"), ("verdict", "WA")))] == 1
    assert samples[("flashjudge_submissions", (("status", "queued"), ("verdict", "")))] == 2
    assert samples[("flashjudge_source_up", (("source", "database"),))] == 1


def test_metrics_histogram_of_judge_durations(client: TestClient, judged: None) -> None:
    samples = scrape(client)
    label = ("language", "cuda-program")

    def bucket(le: str) -> float:
        return samples[("flashjudge_judge_duration_seconds_bucket", (label, ("le", le)))]

    assert bucket("1.0") == 1  # the CE, timed from its parts: 0.25 build + 0 tests + 0.5 overhead
    assert bucket("5.0") == 2 and bucket("30.0") == 2
    assert bucket("60.0") == 3 and bucket("+Inf") == 3
    assert samples[("flashjudge_judge_duration_seconds_sum", (label,))] == 43.75
    assert samples[("flashjudge_judge_duration_seconds_count", (label,))] == 3


def test_metrics_busy_seconds_per_gpu(client: TestClient, judged: None) -> None:
    samples = scrape(client)
    busy = {labels: value for (name, labels), value in samples.items()
            if name == "flashjudge_gpu_busy_seconds_total"}
    assert busy[(("gpu", "H100"), ("worker", "gpu0-7"))] == 3.0
    assert busy[(("gpu", "H100"), ("worker", "gpu1-8"))] == 40.0
    assert busy[(("gpu", ""), ("worker", ""))] == 0.75  # results that do not name their worker


def test_metrics_show_each_workers_last_heartbeat(client: TestClient, judged: None) -> None:
    samples = scrape(client)
    labels = (("gpu", "H100"), ("worker", "gpu0-7"))
    assert samples[("flashjudge_worker_busy", labels)] == 1
    when = datetime(2026, 11, 22, 9, 0, 0, tzinfo=UTC).timestamp()
    assert samples[("flashjudge_worker_last_seen_timestamp_seconds", labels)] == when
    ends = {labels: value for (name, labels), value in samples.items()
            if name == "flashjudge_worker_slurm_end_timestamp_seconds"}
    assert ends == {(("job", "4812"), ("node", "gpu07"), ("worker", "gpu0-job4812@gpu07")):
                    1795828173.0}  # workers outside Slurm have none


def test_metrics_queue_lengths_come_from_the_broker(client: TestClient,
                                                    settings: Settings) -> None:
    celery = control_app(settings)
    for _ in range(2):
        celery.send_task("flashjudge.noop-for-metrics", queue="gpu")
    samples = scrape(client)
    try:
        assert samples[("flashjudge_queue_length", (("queue", "gpu"),))] == 2
        assert samples[("flashjudge_queue_length", (("queue", "cpu"),))] == 0
        assert samples[("flashjudge_source_up", (("source", "broker"),))] == 1
    finally:
        with celery.connection_for_write() as conn:
            conn.default_channel.queue_purge("gpu")


def test_metrics_still_answer_when_the_broker_is_down(tmp_path: Path,
                                                      ready_env: Callable) -> None:
    settings = make_settings(tmp_path, migrate_on_start=True, broker_url="redis://127.0.0.1:1/0")
    with TestClient(create_app(settings)) as client:
        samples = scrape(client)
    assert samples[("flashjudge_source_up", (("source", "broker"),))] == 0
    assert samples[("flashjudge_source_up", (("source", "database"),))] == 1


def test_a_recorded_results_worker_block_feeds_the_metrics(client: TestClient,
                                                           settings: Settings) -> None:
    """The judge task's `worker` block survives recording, on SQLite and PostgreSQL alike."""
    body = judge_result("c-program", 0.5).to_dict()  # 4 tests at 0.5 s: 2 s if estimated
    body["worker"] = {"hostname": "cpu@node3", "gpu": None, "seconds": 7.25}
    with session_scope(settings.db_url) as db:
        user = User(username="metrics-recorded", role="student")
        db.add(user)
        db.flush()
        sub = Submission(user_id=user.id, language="c-program", suite="hw4-mini",
                         status="running", attempt=1, job_key="k")
        db.add(sub)
        db.commit()
        assert recording.record_result(db, settings, sub.id, 1, body, "k")
    try:
        samples = scrape(client)
        label = ("language", "c-program")
        assert samples[("flashjudge_judge_duration_seconds_sum", (label,))] == 7.25
        assert samples[("flashjudge_judge_duration_seconds_bucket", (label, ("le", "5.0")))] == 0
        assert samples[("flashjudge_gpu_busy_seconds_total",
                        (("gpu", ""), ("worker", "cpu@node3")))] == 7.25
    finally:
        with session_scope(settings.db_url) as db:
            db.execute(delete(JudgedTest))
            db.execute(delete(Submission))
            db.execute(delete(User))
