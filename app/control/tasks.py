"""Tasks on the `control` queue, run by a control worker next to the database.

Judge workers send these by name (flashjudge.contract.Task; they import nothing from app/); each
one records a message idempotently through app/submissions (or app/custom_runs, app/similarity, or
app/scoreboard/paired for a paired comparison), its text cleaned
first (no NUL or invalid Unicode reaches the database: app/submissions/safe_text.py). Each message
about a submission is recorded inside its log context, so the control worker's lines carry the
submission id as the judge worker's do. The functions are plain; `register` makes them tasks of
an app (app/control/entry.py calls it when the control app is built), so importing this module
builds nothing.
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from app.core.config import get_settings
from app.custom_runs import runs
from app.db.session import session_scope
from app.logging_setup import configure_logging, submission_context
from app.scoreboard.paired import store as paired_store
from app.similarity import fingerprinting
from app.submissions import feedback, profiles, recording, refinement
from app.submissions.safe_text import clean_json
from flashjudge.contract import FingerprintPayload, PairedResult, Task


def record_progress(submission_id: int, attempt: int, event: dict[str, Any],
                    job: str | None = None) -> bool:
    """A progress event of a running attempt (compile, test-start, test-done)."""
    with submission_context(submission_id), session_scope(get_settings().db_url) as db:
        return recording.record_progress(db, submission_id, attempt, event, job)


def record_result(submission_id: int, attempt: int, result: dict[str, Any],
                  job: str | None = None) -> bool:
    """The final JudgeResult.to_dict() of an attempt."""
    settings = get_settings()
    with submission_context(submission_id), session_scope(settings.db_url) as db:
        return recording.record_result(db, settings, submission_id, attempt, result, job)


def record_failure(submission_id: int, attempt: int, message: str,
                   job: str | None = None) -> bool:
    """The worker failed (system error): retry or give up with SE."""
    settings = get_settings()
    with submission_context(submission_id), session_scope(settings.db_url) as db:
        return recording.record_failure(db, settings, submission_id, attempt, message, job)


def record_handback(submission_id: int, attempt: int, reason: str,
                    job: str | None = None) -> bool:
    """A worker could not finish the attempt (its Slurm job ends): judge it again elsewhere."""
    settings = get_settings()
    with submission_context(submission_id), session_scope(settings.db_url) as db:
        return recording.record_handback(db, settings, submission_id, attempt, reason, job)


def worker_status(status: dict[str, Any]) -> None:
    """A judge worker's heartbeat (GPU, busy or idle, current job)."""
    with session_scope(get_settings().db_url) as db:
        recording.record_worker(db, status)


def record_custom_run(run_id: int, attempt: int, outcome: dict[str, Any]) -> bool:
    """The outcome of a custom run: reference name, optional comparison report, or error."""
    settings = get_settings()
    with session_scope(settings.db_url) as db:
        return runs.record(db, settings, run_id, attempt, outcome)


def record_diagnosis(submission_id: int, attempt: int, diagnosis: dict[str, Any],
                     job: str | None = None) -> bool:
    """The sanitizer Diagnosis.to_dict() of a recorded attempt that failed on a GPU."""
    with submission_context(submission_id), session_scope(get_settings().db_url) as db:
        return feedback.record_diagnosis(db, submission_id, attempt, clean_json(diagnosis),
                                         job)


def record_profile(profile_id: int, outcome: dict[str, Any]) -> bool:
    """An ncu profile: Profile.to_dict(), the .ncu-rep (base64) or why there is none."""
    settings = get_settings()
    with session_scope(settings.db_url) as db:
        return profiles.record_profile(db, settings, profile_id, clean_json(outcome))


def record_timing(submission_id: int, attempt: int, report: dict[str, Any],
                  job: str | None = None) -> bool:
    """The refined times of a recorded attempt (TimingReport.to_dict(), or {"error": ...})."""
    with submission_context(submission_id), session_scope(get_settings().db_url) as db:
        return refinement.record_timing(db, submission_id, attempt, clean_json(report), job)


def record_paired(run_id: int, key: str, result: dict[str, Any]) -> bool:
    """A paired comparison's outcome (PairedResult.to_dict()) for the request with this key."""
    with session_scope(get_settings().db_url) as db:
        return paired_store.record(db, run_id, key, PairedResult.from_dict(clean_json(result)))


def fingerprint(payload: dict[str, Any]) -> bool:
    """Similarity fingerprints of a stored submission or a TA's source."""
    with session_scope(get_settings().db_url) as db:
        return fingerprinting.fingerprint(db, FingerprintPayload.from_dict(payload))


TASKS = {Task.RECORD_PROGRESS: record_progress, Task.RECORD_RESULT: record_result,
         Task.RECORD_FAILURE: record_failure, Task.RECORD_HANDBACK: record_handback,
         Task.WORKER_STATUS: worker_status,
         Task.RECORD_CUSTOM_RUN: record_custom_run, Task.RECORD_DIAGNOSIS: record_diagnosis,
         Task.RECORD_PROFILE: record_profile, Task.FINGERPRINT: fingerprint,
         Task.RECORD_TIMING: record_timing, Task.RECORD_PAIRED: record_paired}


def json_logs(**_: object) -> None:
    """setup_logging handler: the control worker logs JSON lines tagged with the submission id,
    as the API and the judge workers do (Celery's own log setup is replaced)."""
    configure_logging()


def register(app: Celery) -> None:
    """Make every control function a task of `app`, under its contract name; log JSON lines."""
    from celery.signals import setup_logging

    for name, function in TASKS.items():
        app.task(name=str(name))(function)
    setup_logging.connect(json_logs, weak=False)
