"""What the live workers can judge now, read from their heartbeats.

While some worker is live, the service offers (submit page, GET /api/languages, the refusal a CLI
prints) only the languages the live workers judge, and refuses an upload in any other language at
once with a message saying why (409): accepting it would leave it "queued, position 1" for good,
e.g. CUDA on a machine with no GPU worker. While no worker at all is live (the service is
starting, or every worker restarts) nothing is known to be missing: uploads are accepted and wait.
Whatever waits for a worker of its language says so on its page, in the CLI and in /readyz, and a
TA can cancel it.

A worker is live while its last heartbeat is at most `Settings.worker_live_s` old (about three
of its beats). Its languages are those its heartbeat lists (`WorkerStatus.languages`; a worker
from before that field: those of the queues it consumes, among the languages that existed then:
a language added since, such as triton-kernel, which needs torch and triton on the worker, is
offered only where a heartbeat names it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import UserError
from app.db.models import Submission, WorkerStatus, utcnow
from flashjudge.contract import LANGUAGES, Status

# what a worker from before the heartbeat's languages field judges, read from its queues
BEFORE_THE_LIST = frozenset(n for n, f in LANGUAGES.items() if f.by_queue_alone)


@dataclass(frozen=True)
class LanguageState:
    """One language and the live workers that judge it."""

    name: str  # e.g. "cuda-program"
    title: str  # one line for people
    main_file: str  # the file a student drops first, e.g. "hw4.cu"
    uses_gpu: bool  # needs a GPU worker
    workers: tuple[str, ...]  # hostnames of the live workers that judge it

    @property
    def available(self) -> bool:
        return bool(self.workers)

    @property
    def takes_makefile(self) -> bool:
        """Its submission may bring a Makefile (the upload box says so)."""
        return "Makefile" in LANGUAGES[self.name].suffixes

    @property
    def missing(self) -> str:
        """What is not connected, in words: "no GPU worker" or "no worker for c-program"."""
        return "no GPU worker" if self.uses_gpu else f"no worker for {self.name}"


@dataclass(frozen=True)
class Capacity:
    """Every language, in LANGUAGES order, with the live workers that judge it."""

    languages: tuple[LanguageState, ...]  # one per language

    def get(self, name: str) -> LanguageState:
        return next(s for s in self.languages if s.name == name)

    @property
    def available(self) -> list[str]:
        """The languages that can be judged now."""
        return [s.name for s in self.languages if s.available]

    @property
    def known(self) -> bool:
        """Some worker is live, so what it cannot judge is known to be missing."""
        return any(s.workers for s in self.languages)

    @property
    def offered(self) -> list[LanguageState]:
        """The languages an upload is accepted in now: those the live workers judge, or every
        one while no worker is live (they wait for one)."""
        return [s for s in self.languages if s.available or not self.known]

    def why_not(self, name: str) -> str:
        """Why `name` cannot be judged now, and what can be."""
        now = ", ".join(self.available) or "none: no worker is connected"
        return (f"{self.get(name).missing} is connected: {name} cannot be judged now "
                f"(languages that can be judged now: {now})")


def worker_languages(row: WorkerStatus) -> set[str]:
    """The languages a heartbeat row says its worker judges."""
    listed = {n.strip() for n in (row.languages or "").split(",") if n.strip()}
    if listed:
        return listed & set(LANGUAGES)
    queues = {q.strip() for q in row.queues.split(",")}
    return {n for n, f in LANGUAGES.items() if n in BEFORE_THE_LIST and str(f.queue) in queues
            and (row.gpu not in ("", "cpu") or not f.uses_gpu)}


def live_workers(db: Session, settings: Settings, now: datetime | None = None
                 ) -> list[WorkerStatus]:
    """Workers whose last heartbeat is recent enough to count on them, and that take jobs (one
    still starting judges nothing yet)."""
    return [w for w in recent_workers(db, settings, now) if not w.state]


def recent_workers(db: Session, settings: Settings, now: datetime | None = None
                   ) -> list[WorkerStatus]:
    """Workers heard of within worker_live_s, starting ones included."""
    since = (now or utcnow()) - timedelta(seconds=settings.worker_live_s)
    return list(db.scalars(select(WorkerStatus).where(WorkerStatus.last_seen >= since)
                           .order_by(WorkerStatus.hostname)))


def starting_workers(db: Session, settings: Settings) -> list[tuple[str, str, str]]:
    """(hostname, queues, state) of the recent workers that do not take jobs yet."""
    return [(w.hostname, w.queues, w.state) for w in recent_workers(db, settings) if w.state]


def current(db: Session, settings: Settings, now: datetime | None = None) -> Capacity:
    """What the live workers can judge now."""
    judged = [(w.hostname, worker_languages(w)) for w in live_workers(db, settings, now)]
    return Capacity(tuple(
        LanguageState(name, facts.title, facts.main_file, facts.uses_gpu,
                      tuple(host for host, names in judged if name in names))
        for name, facts in LANGUAGES.items()))


def require_worker(db: Session, settings: Settings, language: str) -> None:
    """Refuse (409, field language) an upload the live workers cannot judge (none while no
    worker is live: then it is accepted and waits)."""
    capacity = current(db, settings)
    if capacity.get(language) not in capacity.offered:
        raise UserError(capacity.why_not(language), status=409, field="language")


def waiting_message(capacity: Capacity, language: str) -> str | None:
    """For a queued submission: why it is not being judged, or None when a worker can take it."""
    state = capacity.get(language)
    if state.available:
        return None
    return (f"waiting: {state.missing} is connected; it is judged as soon as one is "
            "(a TA can cancel it)")


def stranded(db: Session, capacity: Capacity) -> dict[str, int]:
    """language -> queued submissions that no live worker can judge (only languages with some)."""
    rows = db.execute(select(Submission.language, func.count())
                      .where(Submission.status == Status.QUEUED)
                      .group_by(Submission.language))
    return {lang: n for lang, n in rows if lang in LANGUAGES and not capacity.get(lang).available}
