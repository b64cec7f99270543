"""Prometheus metrics, computed at scrape time from the database and the broker.

Why a custom collector and not counters bumped in code: the database is the only truth, and the
API may run as several processes that restart at any moment. Reading the tables on each scrape
gives every process the same numbers and loses nothing across restarts.

Exposed families (all prefixed `flashjudge_`):
- submissions{status, verdict}           submissions in the database, by status and verdict
- queue_length{queue}                    messages waiting in each Celery queue (Redis or embedded)
- judge_duration_seconds{language}       histogram of how long finished submissions took to judge
- gpu_busy_seconds_total{worker, gpu}    seconds each worker/GPU spent judging recorded results
- worker_busy{worker, gpu}               1 while a worker's last heartbeat says it is judging
- worker_last_seen_timestamp_seconds{worker, gpu}  its last heartbeat (alert when it gets old)
- worker_slurm_end_timestamp_seconds{worker, job, node}  a worker in a Slurm job: the job's time
  limit (its time left is this minus time(); workers without a limit or outside Slurm: absent)
- source_up{source}                      1 when the database / broker could be read for this scrape
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC

from celery import Celery
from kombu.exceptions import ChannelError
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import Submission, WorkerStatus
from flashjudge.contract import Status

log = logging.getLogger(__name__)

# A judge takes from well under a second (a CE) to many minutes (30 tests near their limits).
DURATION_BUCKETS = (1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0)


@dataclass(frozen=True)
class JudgedRow:
    """What the metrics need of one finished submission."""

    language: str  # the submission's language (histogram label)
    seconds: float | None  # wall seconds the worker spent judging it, if known
    worker: str  # the Celery node that judged it ("" when the result does not say)
    gpu: str  # the GPU it ran on ("" for the CPU track or when unknown)


def verdict_counts(db: Session) -> dict[tuple[str, str], int]:
    """(status, verdict) -> number of submissions; verdict is "" until one is recorded."""
    rows = db.execute(
        select(Submission.status, Submission.verdict, func.count()).group_by(
            Submission.status, Submission.verdict
        )
    )
    return {(status, verdict or ""): count for status, verdict, count in rows}


def judged_rows(db: Session) -> list[JudgedRow]:
    """Finished submissions with their judge time and who judged them.

    The worker reports `result["worker"] = {"hostname", "gpu", "seconds"}`. A result without
    it is timed from its parts: build + test seconds + judge overhead + suite preparation.
    """
    result = Submission.result
    info = result["worker"]
    query = select(
        Submission.language,
        info["seconds"].as_float(),
        info["hostname"].as_string(),
        info["gpu"].as_string(),
        result["compile"]["seconds"].as_float(),
        Submission.total_time,
        result["overhead_s"].as_float(),
        result["prepare_s"].as_float(),
    ).where(Submission.status == Status.DONE, Submission.result.is_not(None))
    rows = []
    for language, seconds, worker, gpu, *parts in db.execute(query):
        if seconds is None and any(p is not None for p in parts):
            seconds = sum(p or 0.0 for p in parts)
        rows.append(JudgedRow(language, seconds, worker or "", gpu or ""))
    return rows


def histogram_buckets(values: Iterable[float]) -> tuple[list[tuple[str, float]], float]:
    """Cumulative Prometheus buckets (le -> count, ending with +Inf) and the sum of `values`."""
    ordered = sorted(values)
    buckets = [(str(le), float(sum(1 for v in ordered if v <= le))) for le in DURATION_BUCKETS]
    buckets.append(("+Inf", float(len(ordered))))
    return buckets, float(sum(ordered))


def database_metrics(db: Session) -> Iterator[Metric]:
    """Submissions by verdict, the judge-duration histogram and busy seconds per GPU."""
    subs = GaugeMetricFamily(
        "flashjudge_submissions", "Submissions in the database.", labels=["status", "verdict"]
    )
    for (status, verdict), count in sorted(verdict_counts(db).items()):
        subs.add_metric([status, verdict], count)
    yield subs
    rows = judged_rows(db)
    durations: dict[str, list[float]] = defaultdict(list)
    busy: dict[tuple[str, str], float] = defaultdict(float)
    for row in rows:
        if row.seconds is None:
            continue
        durations[row.language].append(row.seconds)
        busy[(row.worker, row.gpu)] += row.seconds
    hist = HistogramMetricFamily(
        "flashjudge_judge_duration_seconds",
        "Seconds spent judging finished submissions.",
        labels=["language"],
    )
    for language, values in sorted(durations.items()):
        buckets, total = histogram_buckets(values)
        hist.add_metric([language], buckets, total)
    yield hist
    gpu = CounterMetricFamily(
        "flashjudge_gpu_busy_seconds",
        "Seconds each worker and GPU spent judging (from recorded results).",
        labels=["worker", "gpu"],
    )
    for (worker, device), seconds in sorted(busy.items()):
        gpu.add_metric([worker, device], seconds)
    yield gpu


def worker_metrics(db: Session) -> Iterator[Metric]:
    """Each worker's last heartbeat: busy or idle, and when it was seen (UTC epoch seconds)."""
    busy = GaugeMetricFamily("flashjudge_worker_busy", "1 while the worker is judging.",
                             labels=["worker", "gpu"])
    seen = GaugeMetricFamily("flashjudge_worker_last_seen_timestamp_seconds",
                             "The worker's last heartbeat.", labels=["worker", "gpu"])
    ends = GaugeMetricFamily("flashjudge_worker_slurm_end_timestamp_seconds",
                             "The time limit of the Slurm job the worker lives in.",
                             labels=["worker", "job", "node"])
    for row in db.scalars(select(WorkerStatus).order_by(WorkerStatus.hostname)):
        busy.add_metric([row.hostname, row.gpu], float(row.busy))
        seen.add_metric([row.hostname, row.gpu], row.last_seen.replace(tzinfo=UTC).timestamp())
        job = row.slurm if isinstance(row.slurm, dict) else {}
        if isinstance(job.get("end_time"), int | float):
            ends.add_metric([row.hostname, str(job.get("job_id", "")), str(job.get("node", ""))],
                            float(job["end_time"]))
    yield busy
    yield seen
    yield ends


def queue_lengths(celery: Celery, queues: Iterable[str], timeout_s: float) -> dict[str, int]:
    """Messages waiting in each queue, through the broker's own count (Redis LLEN, files, ...)."""
    sizes: dict[str, int] = {}
    with celery.connection_for_read(connect_timeout=timeout_s) as conn:
        channel = conn.default_channel
        for name in queues:
            try:
                sizes[name] = channel.queue_declare(queue=name, passive=True).message_count
            except ChannelError:  # Redis forgets an empty queue: nothing waiting
                sizes[name] = 0
    return sizes


class FlashjudgeCollector(Collector):
    """Reads the database and the broker on every scrape; a source that fails reports up=0."""

    def __init__(
        self, session: Callable[[], Session], celery: Celery, queues: Iterable[str],
        timeout_s: float = 2.0,
    ) -> None:
        self.session = session
        self.celery = celery
        self.queues = tuple(queues)
        self.timeout_s = timeout_s

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "flashjudge_source_up", "Whether a source could be read.", labels=["source"]
        )
        for name, source in (("database", self._database), ("broker", self._broker)):
            metrics = self._read(name, source)
            up.add_metric([name], 0.0 if metrics is None else 1.0)
            yield from metrics or []
        yield up

    @staticmethod
    def _read(name: str, source: Callable[[], list[Metric]]) -> list[Metric] | None:
        """The source's metrics, or None when it failed (a scrape must still answer)."""
        try:
            return source()
        except Exception:  # noqa: BLE001  any failure of a source means up=0; the log says why
            log.exception("metrics: reading the %s failed", name)
            return None

    def _database(self) -> list[Metric]:
        with self.session() as db:
            return [*database_metrics(db), *worker_metrics(db)]

    def _broker(self) -> list[Metric]:
        lengths = GaugeMetricFamily(
            "flashjudge_queue_length", "Messages waiting in a Celery queue.", labels=["queue"]
        )
        for name, size in queue_lengths(self.celery, self.queues, self.timeout_s).items():
            lengths.add_metric([name], size)
        return [lengths]


def render(*collectors: Collector) -> bytes:
    """The Prometheus text exposition of the collectors."""
    registry = CollectorRegistry(auto_describe=False)
    for collector in collectors:
        registry.register(collector)
    return generate_latest(registry)
