"""The start-up floor on the service side: stored from a result, shown beside the times.

A whole-program test's time (cuda-program, c-program) starts with the process, the CUDA context and
the file I/O, which no kernel change touches: 0.22-0.30 s of a small hw4 test on an H200. The
worker measures that floor per test (worker/timing/floor.py) and sends it as the result's `floor`
block (flashjudge/contract/floor.py); here it becomes `test_results.floor_s` and
`submissions.floor_time`, and the result page and the API show each time less its floor, so a
student sees what their last change did. The ranking reads neither: it keeps the whole-program
time, the homework's rule. The time above the floor is computed when shown, from the current
seconds, so it follows the refined times too.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import JudgedTest, Submission
from flashjudge.contract.floor import FLOOR_KEY, StartupFloor, above_floor


def apply_floor(db: Session, sub: Submission, result: dict[str, Any]) -> None:
    """The result's floors onto the submission's test rows and its total; a result without a
    block (cuda-kernel, an older worker) or whose floor failed leaves them None."""
    floor = StartupFloor.from_dict(result.get(FLOOR_KEY))
    rows = db.scalars(select(JudgedTest).where(JudgedTest.submission_id == sub.id)).all()
    for row in rows:
        point = floor.tests.get(row.test_id) if floor is not None else None
        row.floor_s = None if point is None else round(point.seconds, 6)
    total = floor.total(r.test_id for r in rows) if floor is not None else None
    sub.floor_time = None if total is None else round(total, 6)


def summary(sub: Submission) -> dict[str, Any] | None:
    """What the page and the API say of the floor in total (None: the result has no floor)."""
    floor = StartupFloor.from_dict((sub.result or {}).get(FLOOR_KEY))
    if floor is None:
        return None
    runs = max((p.runs for p in floor.tests.values()), default=0)
    return {"total_s": sub.floor_time, "above_s": above_floor(sub.total_time, sub.floor_time),
            "what": floor.what, "runs": runs, "error": floor.error}


def test_floor(row: JudgedTest) -> dict[str, float | None]:
    """One test's floor and its time above it (None where either is unknown)."""
    return {"floor_s": row.floor_s, "above_floor_s": above_floor(row.seconds, row.floor_s)}
