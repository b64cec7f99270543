"""Custom runs: a user's own input file, the reference output for it, optionally a comparison.

Uploads are streamed to a scratch directory, validated (header and exact size, see
kernels.fileformat), and only then get a row and a directory of their own: bad input changes
nothing. Workers read and write the files by path, so custom runs need workers that share the
data directory (one machine, or a shared filesystem in a cluster).

Custom runs must never starve judging: they wait on their own queues, which workers read only
when no judging waits (worker/celery_adapter/custom_run.py); a student may start
`custom_runs_per_hour` of them per hour; the worker stops the reference computation at
`custom_run_time_limit_s`; and after `custom_run_keep_h` the sweeper deletes the run's files and
marks it expired (`expire`).
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import UserError, not_found
from app.db.models import CustomRun, User, utcnow
from app.judging import dispatch
from app.judging.safe_text import clean_json, clean_text
from flashjudge.claims import custom_run_subject
from flashjudge.contract import Status
from flashjudge.timefmt import moment_text
from kernels.fileformat import FormatError, read_header

CHUNK = 4 << 20
log = logging.getLogger(__name__)


def save_stream(src: BinaryIO, dest: Path, limit: int, field: str) -> int:
    """Copy an upload to `dest` in chunks, refusing more than `limit` bytes."""
    size = 0
    with dest.open("wb") as out:
        while chunk := src.read(CHUNK):
            size += len(chunk)
            if size > limit:
                raise UserError(f"{field} is larger than {limit} bytes", status=413, field=field)
            out.write(chunk)
    return size


def create(
    db: Session, user: User, settings: Settings, input_file: BinaryIO,
    own_output: BinaryIO | None,
) -> CustomRun:
    """Check the rate limit, validate the uploads, store them, commit the row, then send the
    reference job."""
    check_rate_limit(db, user, settings)
    folder = uuid.uuid4().hex
    scratch = settings.custom_dir / f"upload-{folder}"
    scratch.mkdir(parents=True)
    try:
        save_stream(input_file, scratch / "input.bin", settings.max_input_bytes, "input")
        try:
            header = read_header(scratch / "input.bin")
        except FormatError as exc:
            raise UserError(f"input file: {exc}", field=exc.field) from exc
        if own_output is not None:
            size = save_stream(own_output, scratch / "own.bin", header.output_bytes, "output")
            if size != header.output_bytes:
                raise UserError(f"your output has {size} bytes; B*N*d*4 = {header.output_bytes}",
                                field="output")
        run = CustomRun(user_id=user.id, folder=folder, B=header.B, N=header.N, d=header.d,
                        attempt=1, has_own_output=own_output is not None, error="")
        db.add(run)
        db.flush()
        scratch.rename(settings.custom_dir / folder)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        db.rollback()
        raise
    db.commit()
    send(db, run, settings)
    return run


def check_rate_limit(db: Session, user: User, settings: Settings) -> None:
    """At most `custom_runs_per_hour` runs per student in any hour (TAs are exempt); the 429
    says when the next one is allowed."""
    limit = settings.custom_runs_per_hour
    if user.is_ta or limit <= 0:
        return
    window = timedelta(hours=1)
    started = list(db.scalars(select(CustomRun.created_at).where(
        CustomRun.user_id == user.id, CustomRun.created_at >= utcnow() - window)
        .order_by(CustomRun.created_at)))
    if len(started) < limit:
        return
    allowed_at = started[len(started) - limit] + window
    at = moment_text(allowed_at, settings.course_zone, "%H:%M")
    raise UserError(f"too many custom runs: at most {limit} per hour; try again in "
                    f"{wait_text(allowed_at)} (at {at})", status=429)


def wait_text(at: datetime) -> str:
    seconds = max(1, round((at - utcnow()).total_seconds()))
    return f"{seconds} s" if seconds < 120 else f"{round(seconds / 60)} min"


def send(db: Session, run: CustomRun, settings: Settings) -> None:
    """Send the run's current attempt; a broker failure leaves sent_at empty for the sweeper."""
    try:
        dispatch.send_custom_run(run, settings)
    except Exception as exc:  # the broker is down: the sweeper sends it later
        log.warning("could not send custom run %s: %s", run.id, exc)
        return
    run.sent_at = utcnow()
    db.commit()


def get_visible(db: Session, user: User, run_id: int) -> CustomRun:
    run = db.get(CustomRun, run_id)
    if run is None or (run.user_id != user.id and not user.is_ta):
        raise not_found("custom run")  # the same answer: ids cannot be probed
    return run


def recent_for(db: Session, user: User, limit: int = 20) -> list[CustomRun]:
    """The user's latest custom runs, newest first."""
    return list(db.scalars(select(CustomRun).where(CustomRun.user_id == user.id)
                           .order_by(CustomRun.id.desc()).limit(limit)))


def output_path(run: CustomRun, settings: Settings) -> Path:
    if run.expired_at is not None:
        raise UserError(f"this custom run expired: its files are deleted "
                        f"{settings.custom_run_keep_h:g} h after upload; upload the input again",
                        status=410)
    path = settings.custom_dir / run.folder / "reference.bin"
    if run.status != Status.DONE or not path.exists():
        raise UserError("the reference output is not ready yet", status=409)
    return path


def record(db: Session, settings: Settings, run_id: int, attempt: int,
           outcome: dict[str, Any]) -> bool:
    """Store a worker's outcome once per attempt."""
    outcome = clean_json(outcome)
    run = db.get(CustomRun, run_id)
    if run is None or run.status == Status.DONE or run.attempt != attempt:
        return False
    run.status = Status.DONE
    run.reference = outcome.get("reference")
    run.report = outcome.get("report")
    run.error = str(outcome.get("error") or "")
    run.finished_at = utcnow()
    db.commit()
    dispatch.retire(custom_run_subject(run.id), settings)
    return True


def expire(db: Session, settings: Settings) -> list[int]:
    """Delete the files of runs older than `custom_run_keep_h` and mark them expired (an
    unfinished one is closed with an error saying so); also scratch left by failed uploads."""
    before = utcnow() - timedelta(hours=settings.custom_run_keep_h)
    runs = list(db.scalars(select(CustomRun).where(CustomRun.expired_at.is_(None),
                                                   CustomRun.created_at < before)))
    for run in runs:
        shutil.rmtree(settings.custom_dir / run.folder, ignore_errors=True)
        run.expired_at = utcnow()
        if run.status != Status.DONE:
            run.status = Status.DONE
            run.error = "expired before a worker computed it: upload the input again"
            run.finished_at = utcnow()
            dispatch.retire(custom_run_subject(run.id), settings)
    db.commit()
    remove_old_scratch(settings, before)
    return [run.id for run in runs]


def remove_old_scratch(settings: Settings, before: datetime) -> None:
    """Scratch dirs of uploads that never became a run (a killed request), past the same age."""
    if not settings.custom_dir.is_dir():
        return
    cutoff = time.time() - (utcnow() - before).total_seconds()
    for path in settings.custom_dir.glob("upload-*"):
        if path.stat().st_mtime < cutoff:
            shutil.rmtree(path, ignore_errors=True)


def expires_at(run: CustomRun, settings: Settings) -> datetime:
    return run.created_at + timedelta(hours=settings.custom_run_keep_h)


def to_dict(run: CustomRun, settings: Settings) -> dict[str, Any]:
    """The API's view of a run (CustomRunOut)."""
    expired = run.expired_at is not None
    note = (f"expired: its files were deleted {settings.custom_run_keep_h:g} h after upload"
            if expired else "")
    return {"id": run.id, "status": run.status, "B": run.B, "N": run.N, "d": run.d,
            "reference": run.reference, "report": run.report,
            "error": clean_text(run.error) or None, "expired": expired, "note": note,
            "created_at": run.created_at.isoformat() + "Z",
            "expires_at": expires_at(run, settings).isoformat() + "Z",
            "output_url": f"/api/custom-runs/{run.id}/output" if run.status == Status.DONE
            and not run.error and not expired else None}
