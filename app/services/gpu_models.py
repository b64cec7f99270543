"""GPU models on the service side: which model a result was judged on, and which models the
scoreboard has results of (a fleet mixing models gets one board per model)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import Submission
from flashjudge.contract import Status, gpu_slug


def gpu_model_of(result: dict[str, Any]) -> str | None:
    """The GPU a result names in its `worker` block (None: the CPU track, or an older worker)."""
    worker = result.get("worker")
    name = worker.get("gpu") if isinstance(worker, dict) else None
    return str(name)[:200] if isinstance(name, str) and gpu_slug(name) else None


def judged_models(db: Session) -> list[str]:
    """The GPU models with judged submissions, the most used first (then by name)."""
    count = func.count(Submission.id)
    rows = db.execute(select(Submission.gpu_model, count)
                      .where(Submission.status == Status.DONE, Submission.gpu_model.is_not(None))
                      .group_by(Submission.gpu_model).order_by(count.desc(), Submission.gpu_model))
    return [str(name) for name, _ in rows]
