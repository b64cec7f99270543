"""Custom runs: a user's own input file, the reference output for it, optionally a comparison.

Uploads are streamed to a scratch directory, validated (header and exact size, see
kernels.fileformat), and only then get a row and a directory of their own: bad input changes
nothing. Workers read and write the files by path, so custom runs need workers that share the
data directory (one machine, or a shared filesystem in a cluster).
"""

from __future__ import annotations

import logging
import shutil
import uuid
from pathlib import Path
from typing import Any, BinaryIO

from sqlalchemy.orm import Session

from app import queue
from app.core.config import Settings
from app.core.errors import UserError, not_found
from app.db.models import CustomRun, User, utcnow
from flashjudge.contract import Status
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
    """Validate the uploads, store them, commit the row, then send the reference job."""
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


def send(db: Session, run: CustomRun, settings: Settings) -> None:
    """Send the run's current attempt; a broker failure leaves sent_at empty for the sweeper."""
    try:
        queue.send_custom_run(run, settings)
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


def output_path(run: CustomRun, settings: Settings) -> Path:
    path = settings.custom_dir / run.folder / "reference.bin"
    if run.status != Status.DONE or not path.exists():
        raise UserError("the reference output is not ready yet", status=409)
    return path


def record(db: Session, run_id: int, attempt: int, outcome: dict[str, Any]) -> bool:
    """Store a worker's outcome once per attempt."""
    run = db.get(CustomRun, run_id)
    if run is None or run.status == Status.DONE or run.attempt != attempt:
        return False
    run.status = Status.DONE
    run.reference = outcome.get("reference")
    run.report = outcome.get("report")
    run.error = str(outcome.get("error") or "")
    run.finished_at = utcnow()
    db.commit()
    return True


def to_dict(run: CustomRun) -> dict[str, Any]:
    return {"id": run.id, "status": run.status, "B": run.B, "N": run.N, "d": run.d,
            "reference": run.reference, "report": run.report, "error": run.error or None,
            "output_url": f"/api/custom-runs/{run.id}/output" if run.status == Status.DONE
            and not run.error else None}
