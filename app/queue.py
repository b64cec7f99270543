"""The service side of Celery: sending judge jobs and hosting the `control` tasks.

The broker configuration comes from worker.celery_app.broker_settings (pure configuration, so both
sides agree on the broker); no worker logic is imported. The control tasks that record results
live in app/control_tasks.py and run in a control worker next to the database.
"""

from __future__ import annotations

import base64
from functools import lru_cache
from pathlib import Path

from celery import Celery

from app.core.config import Settings, get_settings
from app.db.models import CustomRun, Profile, Submission
from worker.celery_app import broker_settings

JUDGE_TASK = "flashjudge.judge"
CUSTOM_RUN_TASK = "flashjudge.custom_run"
PROFILE_TASK = "flashjudge.profile"
PROFILE_QUEUE = "gpu-low"  # consumed by GPU workers after their judgings (worker/tasks.py)


def make_control_app(settings: Settings) -> Celery:
    """A Celery app on the configured broker with the control tasks registered."""
    app = Celery("flashjudge-control")
    app.conf.update(broker_settings(settings.broker_url, settings.data_dir.resolve()))
    app.conf.imports = ("app.control_tasks",)
    return app


@lru_cache
def _app_for(broker_url: str | None, data_dir: str) -> Celery:
    return make_control_app(get_settings().model_copy(
        update={"broker_url": broker_url, "data_dir": Path(data_dir)}))


def control_app(settings: Settings | None = None) -> Celery:
    """The service Celery app for these settings (built on first use, not at import)."""
    settings = settings or get_settings()
    return _app_for(settings.broker_url, str(settings.data_dir.resolve()))


def judge_payload(sub: Submission, settings: Settings) -> dict:
    """Only what a worker needs: ids, language, sources (base64), suite."""
    return {
        "submission_id": sub.id,
        "attempt": sub.attempt,
        "job": sub.job_key,
        "language": sub.language,
        "files": {f.name: base64.b64encode(f.content).decode() for f in sub.files},
        "suite": sub.suite,
        "tests": settings.judge_test_ids,
        "seed": None,
    }


def send_judge(sub: Submission, queue: str, settings: Settings) -> str:
    """Send the judge task for the submission's current attempt (row already committed);
    returns the Celery task id."""
    payload = judge_payload(sub, settings)
    return control_app(settings).send_task(JUDGE_TASK, kwargs={"payload": payload},
                                           queue=queue).id


def revoke(task_ids: list[str], settings: Settings) -> None:
    """Ask live workers to skip these queued tasks (best effort: a stale result is ignored
    anyway, this only saves the GPU time of judging it)."""
    ids = [t for t in task_ids if t]
    if ids:
        control_app(settings).control.revoke(ids)


def send_custom_run(run: CustomRun, settings: Settings) -> None:
    folder = settings.custom_dir / run.folder
    payload = {
        "run_id": run.id,
        "attempt": run.attempt,
        "input_path": str(folder / "input.bin"),
        "output_path": str(folder / "reference.bin"),
        "own_output_path": str(folder / "own.bin") if run.has_own_output else None,
    }
    control_app(settings).send_task(
        CUSTOM_RUN_TASK, kwargs={"payload": payload}, queue=settings.custom_run_queue
    )


def send_profile(profile: Profile, sub: Submission, settings: Settings) -> None:
    """Ask a GPU worker for one ncu run of the submission on profile.test_id, at low priority:
    on its own queue, which a GPU worker reads only when no judging waits (worker/tasks.py)."""
    payload = {**judge_payload(sub, settings), "profile_id": profile.id,
               "test_id": profile.test_id, "tests": None}
    control_app(settings).send_task(PROFILE_TASK, kwargs={"payload": payload},
                                    queue=PROFILE_QUEUE, priority=9)
