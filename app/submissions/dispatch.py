"""The service side of Celery: sending work to the workers and hosting the `control` tasks.

The broker configuration, task and queue names come from flashjudge.contract, which the workers
read too; the payloads are built from rows by app/submissions/jobs.py; nothing of worker/ is
imported. The control tasks that record results live in app/control/tasks.py and run in a
control worker next to the database.

Every send first publishes its attempt as the live one in the attempt ledger (flashjudge.claims,
beside the broker), so a worker can tell a stale or duplicate message from the one wanted.
"""

from __future__ import annotations

import logging
import threading
from functools import lru_cache
from pathlib import Path

from celery import Celery
from sqlalchemy.orm import Session

from app.core.config import Settings, get_settings
from app.db.models import CustomRun, PairedRun, Profile, Submission, utcnow
from app.submissions import jobs
from app.submissions.fingerprint_batch import FingerprintBatch
from flashjudge.claims import (
    Ledger,
    attempt_name,
    custom_run_subject,
    ledger_for,
    submission_subject,
)
from flashjudge.contract import (
    LANGUAGES,
    LOW_PRIORITY,
    FingerprintPayload,
    Queue,
    Task,
    celery_config,
    make_broker_folders,
    model_queue,
)

log = logging.getLogger(__name__)
_REVOKING = threading.Lock()  # one revoke at a time per process: Celery's broadcast takes a
# broker connection from the app's pool and then, to publish, another from the same pool
# (broker_pool_limit, 10): ten uploads superseding at once each held one and waited forever
# for a second (seen in bench/submission_burst.py once the board's lock stopped spacing them)


def make_control_app(settings: Settings) -> Celery:
    """A Celery app on the configured broker (app/control/entry.py adds the control tasks)."""
    config = celery_config(settings.broker_url, settings.data_dir.resolve())
    make_broker_folders(config)
    app = Celery("flashjudge-control")
    app.conf.update(config)
    return app


@lru_cache
def _app_for(broker_url: str | None, data_dir: str) -> Celery:
    return make_control_app(get_settings().model_copy(
        update={"broker_url": broker_url, "data_dir": Path(data_dir)}))


def control_app(settings: Settings | None = None) -> Celery:
    """The service Celery app for these settings (built on first use, not at import)."""
    settings = settings or get_settings()
    return _app_for(settings.broker_url, str(settings.data_dir.resolve()))


@lru_cache
def _ledger_for(broker_url: str | None, data_dir: str) -> Ledger:
    return ledger_for(broker_url, Path(data_dir))


def ledger(settings: Settings | None = None) -> Ledger:
    """The attempt ledger beside the configured broker (made on first use, not at import)."""
    settings = settings or get_settings()
    return _ledger_for(settings.broker_url, str(settings.data_dir.resolve()))


def retire(subject: str, settings: Settings) -> None:
    """No attempt of `subject` is wanted any more (a verdict is recorded), so workers drop any
    copy still queued. Best effort: a copy that gets through is judged and its result ignored."""
    try:
        ledger(settings).retire(subject)
    except Exception as exc:  # noqa: BLE001 - the broker is away; only GPU time is at stake
        log.warning("could not retire %s in the attempt ledger: %s", subject, exc)


def judge_queue(sub: Submission) -> str:
    """Where a judging (or a timing refinement) of `sub` waits: a submission already judged on a
    GPU model goes to that model's queue `gpu.<slug>` (its rejudges compare only there); any
    other to its language's queue."""
    facts = LANGUAGES[sub.language]
    if facts.uses_gpu and sub.gpu_model:
        return model_queue(sub.gpu_model) or str(facts.queue)
    return str(facts.queue)


def send_fingerprint(settings: Settings, submission_id: int | None = None,
                     source_id: int | None = None) -> None:
    """Ask the control worker to fingerprint a stored submission or source (never a GPU's job)."""
    payload = FingerprintPayload(submission_id=submission_id, source_id=source_id)
    control_app(settings).send_task(str(Task.FINGERPRINT), kwargs={"payload": payload.to_dict()},
                                    queue=str(Queue.CONTROL))


def fingerprint_later(settings: Settings, submission_id: int | None = None,
                      source_id: int | None = None) -> None:
    """Ask the control worker for a document's fingerprints; a broker failure only delays the
    page (its "fingerprint the missing ones" button sends the request again)."""
    try:
        send_fingerprint(settings, submission_id=submission_id, source_id=source_id)
    except Exception as exc:  # noqa: BLE001 - the submission itself is stored and judged anyway
        log.warning("could not ask for fingerprints of %s/%s: %s", submission_id, source_id, exc)


@lru_cache
def _batch_for(broker_url: str | None, data_dir: str) -> FingerprintBatch:
    def send(ids: list[int]) -> None:  # the app is looked up at each send, not made here
        payload = FingerprintPayload(submission_ids=ids)
        _app_for(broker_url, data_dir).send_task(
            str(Task.FINGERPRINT), kwargs={"payload": payload.to_dict()}, queue=str(Queue.CONTROL))
    return FingerprintBatch(send)


def fingerprint_batch(settings: Settings) -> FingerprintBatch:
    """This process's batch of fingerprint requests for the configured broker."""
    return _batch_for(settings.broker_url, str(settings.data_dir.resolve()))


def fingerprint_soon(settings: Settings, submission_id: int) -> None:
    """A new upload's fingerprints, asked for with the others of its moment in one message
    (app/submissions/fingerprint_batch.py): a burst of uploads costs a message, not hundreds."""
    fingerprint_batch(settings).add(submission_id)


def send_judge(sub: Submission, queue: str, settings: Settings) -> str:
    """Send the judge task for the submission's current attempt (row already committed);
    returns the Celery task id."""
    payload = jobs.judge_payload(sub, settings).to_dict()
    ledger(settings).publish(submission_subject(sub.id), sub.attempt, sub.job_key)
    task_id = control_app(settings).send_task(str(Task.JUDGE), kwargs={"payload": payload},
                                              queue=queue).id
    mark_sent(submission_subject(sub.id), attempt_name(sub.attempt, sub.job_key), settings)
    return task_id


def mark_sent(subject: str, attempt: str, settings: Settings) -> None:
    """Note a send beside the broker (after it: the mark vouches for a message that exists).
    One message per attempt stays in flight while its mark does (app/upkeep/sweeper.py); a
    mark gone with the broker's data says the message went too (app/upkeep/broker_watch.py).
    Best effort: a missing mark costs at most one more copy, which the claims drop."""
    try:
        ledger(settings).mark_sent(subject, attempt)
    except Exception as exc:  # noqa: BLE001 - the broker took the message; the mark is a hint
        log.warning("could not mark %s %s as sent: %s", subject, attempt, exc)


def send_attempt(db: Session, sub: Submission, settings: Settings) -> None:
    """Send the submission's current attempt (committed) and note when; on a broker failure
    leave sent_at empty: the sweeper sends it again, nothing is lost."""
    try:
        sub.task_id = send_judge(sub, judge_queue(sub), settings)
    except Exception as exc:  # noqa: BLE001 - the broker is down: the sweeper re-sends
        log.warning("could not send submission %s: %s", sub.id, exc)
        return
    sub.sent_at = utcnow()
    db.commit()


def revoke(task_ids: list[str], settings: Settings) -> None:
    """Ask live workers to skip these queued tasks. Best effort: a stale result is ignored
    anyway, this only saves the GPU time of judging it."""
    ids = [t for t in task_ids if t]
    if not ids:
        return
    try:
        with _REVOKING:
            control_app(settings).control.revoke(ids)
    except Exception as exc:  # noqa: BLE001 - the broker is away; only GPU time is at stake
        log.warning("could not revoke %s: %s", ids, exc)


def custom_queue(settings: Settings) -> Queue:
    """The custom runs' own queue: custom-cpu when custom_run_queue says cpu, else custom-gpu."""
    name = settings.custom_run_queue.strip().lower()
    return Queue.CUSTOM_CPU if name in ("cpu", str(Queue.CUSTOM_CPU)) else Queue.CUSTOM_GPU


def send_custom_run(run: CustomRun, settings: Settings) -> None:
    """Send the run's current attempt on its own queue at the lowest priority, with its time
    limit: a worker takes it only when no judging (priority 0) waits on any of its queues."""
    queue = custom_queue(settings)
    payload = jobs.custom_run_payload(run, settings, queue)
    ledger(settings).publish(custom_run_subject(run.id), run.attempt)
    control_app(settings).send_task(str(Task.CUSTOM_RUN), kwargs={"payload": payload.to_dict()},
                                    queue=str(queue), priority=LOW_PRIORITY)
    mark_sent(custom_run_subject(run.id), attempt_name(run.attempt), settings)


def send_profile(profile: Profile, sub: Submission, settings: Settings) -> None:
    """Ask a GPU worker for one ncu run of the submission on profile.test_id, at low priority:
    on its own queue, which a GPU worker reads only when no judging waits (LOW_QUEUES in
    worker/celery_adapter/app.py; a profile yields to waiting judgings)."""
    payload = jobs.profile_payload(profile, sub, settings)
    control_app(settings).send_task(str(Task.PROFILE), kwargs={"payload": payload.to_dict()},
                                    queue=str(Queue.GPU_LOW), priority=LOW_PRIORITY)


def send_refine(sub: Submission, settings: Settings) -> None:
    """After the verdicts: the passed tests run again until their times can carry a rank, at low
    priority (GPU workers read `gpu-low` only when no judging waits; the CPU track: `cpu`)."""
    payload = jobs.refine_payload(sub, settings)
    target = Queue.GPU_LOW if LANGUAGES[sub.language].uses_gpu else Queue.CPU
    control_app(settings).send_task(str(Task.REFINE_TIMING), kwargs={"payload": payload.to_dict()},
                                    queue=str(target), priority=LOW_PRIORITY)


def send_paired(run: PairedRun, a: Submission, b: Submission, settings: Settings) -> None:
    """Ask for one paired comparison where timing refinements wait (`gpu-low`, the CPU track's
    `cpu`), at low priority: it never delays a judging."""
    payload = jobs.paired_payload(run, a, b, settings)
    target = Queue.GPU_LOW if LANGUAGES[a.language].uses_gpu else Queue.CPU
    control_app(settings).send_task(str(Task.PAIRED_RUN), kwargs={"payload": payload.to_dict()},
                                    queue=str(target), priority=LOW_PRIORITY)
