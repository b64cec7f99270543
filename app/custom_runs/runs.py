"""Custom runs: a user's own input file, the reference output for it, optionally a comparison.

A slot is reserved before a byte of the upload is read (app/custom_runs/quota.py: runs per
hour, disk per student and in total); the body is then streamed into a scratch directory, each
file stopped at its size (app/custom_runs/stream.py), validated (header and exact size, see
kernels.fileformat), and only then becomes the run with a directory of its own: bad input
leaves nothing and gives the slot back. Workers read and write the files by path, so custom
runs need workers that share the data directory (one machine, or a shared filesystem).

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
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request

from app.core.config import Settings
from app.core.errors import UserError, not_found
from app.custom_runs import quota, stream
from app.custom_runs.quota import Reservation
from app.custom_runs.stream import Received
from app.db.models import CustomRun, User, utcnow
from app.db.session import session_factory
from app.submissions import dispatch
from app.submissions.safe_text import clean_json, clean_text
from flashjudge.claims import custom_run_subject
from flashjudge.contract import Status
from kernels.fileformat import FormatError, InputHeader, check_size, read_header

log = logging.getLogger(__name__)


async def upload(request: Request, settings: Settings, user: User, slot: Reservation
                 ) -> CustomRun:
    """Stream the body into a scratch dir (each file within its size, the slot's disk held as
    it arrives), check it, store it as the reserved run and send the reference job. Any failure
    leaves no file and frees the slot."""
    scratch = settings.custom_dir / f"upload-{slot.folder}"
    scratch.mkdir(parents=True)
    try:
        received = await stream.receive(
            request, scratch, settings.max_input_bytes, settings.upload_drain_bytes,
            quota.body_held(0, slot.declared),
            lambda total: quota.grow(settings, user, slot, total))
        return await run_in_threadpool(store, settings, slot, received, scratch)
    except ClientDisconnect as exc:
        raise UserError("the upload stopped before its end; send it again", field="input",
                        status=400) from exc
    finally:
        if scratch.exists():  # stored runs were moved out of it
            shutil.rmtree(scratch, ignore_errors=True)
            quota.release(settings, slot.run_id)


def checked(received: Received, scratch: Path) -> InputHeader:
    """The input's header once the whole upload is in: exact sizes, an output of 4*B*N*d."""
    if "input" not in received.sizes:
        raise UserError("input: an input file is required", field="input")
    try:
        header = received.header or read_header(scratch / "input.bin")
        check_size(header, received.sizes["input"])
    except FormatError as exc:
        raise UserError(f"input file: {exc}", field=exc.field) from exc
    own = received.sizes.get("output")
    if own is not None and own != header.output_bytes:
        raise UserError(f"your output has {own} bytes; B*N*d*4 = {header.output_bytes}",
                        field="output")
    return header


def store(settings: Settings, slot: Reservation, received: Received, scratch: Path
          ) -> CustomRun:
    """Turn the reservation into a queued run (committed) with its files in place; send it."""
    header = checked(received, scratch)
    own = "output" in received.sizes
    with session_factory(settings.db_url)() as db:
        run = db.get(CustomRun, slot.run_id)
        if run is None or run.status != quota.RESERVED:
            raise UserError("this upload took longer than a custom run is kept; send it again",
                            status=410, field="input")
        run.B, run.N, run.d, run.has_own_output = header.B, header.N, header.d, own
        run.kept_bytes = header.input_bytes + header.output_bytes * (2 if own else 1)
        run.status = Status.QUEUED
        db.flush()
        scratch.rename(settings.custom_dir / run.folder)
        db.commit()
        send(db, run, settings)
        return run


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
            "mistake": (run.report or {}).get("mistake") or None,
            "error": clean_text(run.error) or None, "expired": expired, "note": note,
            "created_at": run.created_at.isoformat() + "Z",
            "expires_at": expires_at(run, settings).isoformat() + "Z",
            "output_url": f"/api/custom-runs/{run.id}/output" if run.status == Status.DONE
            and not run.error and not expired else None}
