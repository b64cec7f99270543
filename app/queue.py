"""The service side of Celery: sending judge jobs and hosting the `control` tasks.

The broker configuration, task and queue names and payloads come from flashjudge.contract, which
the workers read too; nothing of worker/ is imported. The control tasks that record results live
in app/control_tasks.py and run in a control worker next to the database.

Every send first publishes its attempt as the live one in the attempt ledger (flashjudge.claims,
beside the broker), so a worker can tell a stale or duplicate message from the one wanted.
"""

from __future__ import annotations

import dataclasses
import logging
from functools import lru_cache
from pathlib import Path

from celery import Celery

from app.core.config import Settings, get_settings
from app.db.models import CustomRun, Profile, Submission
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
    Attempt,
    CustomRunPayload,
    FingerprintPayload,
    JudgePayload,
    ProfilePayload,
    Queue,
    RefinePayload,
    Task,
    celery_config,
    make_broker_folders,
    model_queue,
)

log = logging.getLogger(__name__)


def make_control_app(settings: Settings) -> Celery:
    """A Celery app on the configured broker (app/control_entry.py adds the control tasks)."""
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


def judge_payload(sub: Submission, settings: Settings) -> JudgePayload:
    """Only what a worker needs: the attempt, language, sources, suite."""
    return JudgePayload(Attempt(sub.id, sub.attempt, sub.job_key), language=sub.language,
                        files={f.name: f.content for f in sub.files}, suite=sub.suite,
                        tests=settings.judge_test_ids, gpu_model=sub.gpu_model)


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


def send_judge(sub: Submission, queue: str, settings: Settings) -> str:
    """Send the judge task for the submission's current attempt (row already committed);
    returns the Celery task id."""
    payload = judge_payload(sub, settings).to_dict()
    ledger(settings).publish(submission_subject(sub.id), sub.attempt, sub.job_key)
    task_id = control_app(settings).send_task(str(Task.JUDGE), kwargs={"payload": payload},
                                              queue=queue).id
    mark_sent(submission_subject(sub.id), attempt_name(sub.attempt, sub.job_key), settings)
    return task_id


def mark_sent(subject: str, attempt: str, settings: Settings) -> None:
    """Note a send beside the broker (after it: the mark vouches for a message that exists).
    One message per attempt stays in flight while its mark does (app/services/sweeper.py); a
    mark gone with the broker's data says the message went too (app/services/broker_watch.py).
    Best effort: a missing mark costs at most one more copy, which the claims drop."""
    try:
        ledger(settings).mark_sent(subject, attempt)
    except Exception as exc:  # noqa: BLE001 - the broker took the message; the mark is a hint
        log.warning("could not mark %s %s as sent: %s", subject, attempt, exc)


def revoke(task_ids: list[str], settings: Settings) -> None:
    """Ask live workers to skip these queued tasks (best effort: a stale result is ignored
    anyway, this only saves the GPU time of judging it)."""
    ids = [t for t in task_ids if t]
    if ids:
        control_app(settings).control.revoke(ids)


def custom_queue(settings: Settings) -> Queue:
    """The custom runs' own queue: custom-cpu when custom_run_queue says cpu, else custom-gpu."""
    name = settings.custom_run_queue.strip().lower()
    return Queue.CUSTOM_CPU if name in ("cpu", str(Queue.CUSTOM_CPU)) else Queue.CUSTOM_GPU


def send_custom_run(run: CustomRun, settings: Settings) -> None:
    """Send the run's current attempt on its own queue at the lowest priority, with its time
    limit: a worker takes it only when no judging (priority 0) waits on any of its queues."""
    folder = settings.custom_dir / run.folder
    queue = custom_queue(settings)
    payload = CustomRunPayload(
        run_id=run.id, attempt=run.attempt, input_path=str(folder / "input.bin"),
        output_path=str(folder / "reference.bin"),
        own_output_path=str(folder / "own.bin") if run.has_own_output else None,
        time_limit_s=settings.custom_run_time_limit_s, queue=str(queue))
    ledger(settings).publish(custom_run_subject(run.id), run.attempt)
    control_app(settings).send_task(str(Task.CUSTOM_RUN), kwargs={"payload": payload.to_dict()},
                                    queue=str(queue), priority=LOW_PRIORITY)
    mark_sent(custom_run_subject(run.id), attempt_name(run.attempt), settings)


def send_profile(profile: Profile, sub: Submission, settings: Settings) -> None:
    """Ask a GPU worker for one ncu run of the submission on profile.test_id, at low priority:
    on its own queue, which a GPU worker reads only when no judging waits (worker/tasks.py)."""
    judged = dataclasses.replace(judge_payload(sub, settings), tests=None)
    payload = ProfilePayload(judged, profile.id, profile.test_id)
    control_app(settings).send_task(str(Task.PROFILE), kwargs={"payload": payload.to_dict()},
                                    queue=str(Queue.GPU_LOW), priority=LOW_PRIORITY)


def send_refine(sub: Submission, settings: Settings) -> None:
    """After the verdicts: the passed tests run again until their times can carry a rank, at low
    priority (GPU workers read `gpu-low` only when no judging waits; the CPU track: `cpu`)."""
    tests = {t.test_id: {"seconds": t.seconds or 0.0, "passed": t.verdict == "AC"}
             for t in sub.tests}
    payload = RefinePayload(dataclasses.replace(judge_payload(sub, settings), tests=list(tests)),
                            tests)
    target = Queue.GPU_LOW if LANGUAGES[sub.language].uses_gpu else Queue.CPU
    control_app(settings).send_task(str(Task.REFINE_TIMING), kwargs={"payload": payload.to_dict()},
                                    queue=str(target), priority=LOW_PRIORITY)
