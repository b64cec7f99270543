"""The refinement phase on the service side: ask for it when verdicts are recorded, and record the
times it brings back.

A verdict reaches the student at once with the verdict pass's times; the passed tests then run
again on a lower-priority queue (worker/timing/) and the refined times replace the first ones in
the ranking, each with its noise band. A refinement of an attempt since rejudged is ignored, and
one that failed leaves the first times standing, with the reason kept for TAs.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import Submission
from app.submissions import dispatch, lifecycle

log = logging.getLogger(__name__)


def request_refinement(sub: Submission, settings: Settings) -> None:
    """Send the refinement of a just-recorded result, when some test passed (best effort: a
    broker away now leaves the verdict pass's times, which are valid, just noisier)."""
    if not settings.refine_timing or not sub.passed:
        return
    try:
        dispatch.send_refine(sub, settings)
    except Exception as exc:  # noqa: BLE001 - the result is recorded; only precision is lost
        log.warning("could not ask for refined times of submission %s: %s", sub.id, exc)


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """What the pages, the API and the scoreboard show of a TimingReport.to_dict(): each test's
    statistic and band, the total's, and what it cost."""
    total = report["total"]
    tests = {t["id"]: {"s": t["estimate"]["statistic"],
                       "band_s": (t["estimate"]["high"] - t["estimate"]["low"]) / 2,
                       "runs": t["estimate"]["n"], "stop": t["stop"]}
             for t in report["tests"]}
    return {"total_s": total["statistic"], "total_band_s": (total["high"] - total["low"]) / 2,
            "runs": report["runs"], "cost_ratio": report["cost_ratio"],
            "stopped": report["stopped"], "tests": tests, "error": None}


def record_timing(db: Session, submission_id: int, attempt: int, report: dict[str, Any],
                  job: str | None = None) -> bool:
    """Store the refined times of the recorded attempt; anything else is stale and ignored."""
    sub = db.get(Submission, submission_id, with_for_update=True)
    if sub is None or not lifecycle.is_recorded(sub, attempt, job):
        db.rollback()
        return False
    if report.get("error"):
        sub.result = {**(sub.result or {}), "timing": {"error": str(report["error"])[:500]}}
        db.commit()
        log.info("recorded refined times for attempt %s: none (%s)", attempt,
                 str(report["error"])[:200])
        return True
    timing = summary(report)
    sub.result = {**(sub.result or {}), "timing": timing}
    for row in sub.tests:
        refined = timing["tests"].get(row.test_id)
        if refined is not None and row.verdict == "AC":
            row.detail = {**(row.detail or {}), "first_seconds": row.seconds,
                          "band_s": refined["band_s"], "runs": refined["runs"]}
            row.seconds = refined["s"]
    sub.total_time = round(sum(r.seconds or 0.0 for r in sub.tests), 6)
    db.commit()
    log.info("recorded refined times for attempt %s", attempt)
    return True
