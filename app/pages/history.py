"""The history page: a student's best-so-far chart and two submissions compared side by side.

One resource, one name: the rows are read by app/results/history.py, the chart drawn by
app/charts/history.py, the same served as JSON by app/api/history.py (shapes: schemas/history.py).
"""

from __future__ import annotations

from datetime import tzinfo
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from app.api.history import whose
from app.charts.history import StepPoint, StepSeries, best_so_far_svg
from app.course import assignments
from app.db.models import Submission, User
from app.pages.rendering import PageUser, render
from app.results import history
from app.web.deps import SessionDep, SettingsDep

router = APIRouter(include_in_schema=False)


def chart(series: list[history.Series], zone: tzinfo) -> Markup:
    """The best-so-far SVG, with the passed count marked where it changed and every submission
    as a point with its own verdict (one passing submission among WAs is not a flat line)."""
    steps = []
    for s in series:
        points, passed = [], None
        for p in s.points:
            mark = f"{p.passed} passed" if p.improved and p.passed != passed else ""
            passed = p.passed
            points.append(StepPoint(
                p.at, p.total_s, p.improved, f"#{p.submission_id}: best #{p.best_id}, "
                f"{p.passed} passed, {p.total_s:.3f} s", mark, p.verdict,
                f"#{p.submission_id}: {p.verdict}, {p.own_passed} passed, {p.own_s:.3f} s",
                p.own_s))
        steps.append(StepSeries(s.model, points))
    svg = best_so_far_svg(steps, "Best so far: total time of the best submission", zone=zone)
    return Markup(svg)  # noqa: S704 - every label is escaped by the chart


def pick(subs: list[Submission], a: int | None, b: int | None) -> tuple[int | None, int | None]:
    """The pair to compare: as asked, or by default the last two judged submissions."""
    newest = [s.id for s in reversed(subs)]
    b = b if b is not None else (newest[0] if newest else None)
    a = a if a is not None else next((i for i in newest if i != b), None)
    return a, b


def page_context(db: SessionDep, settings: SettingsDep, viewer: User, owner: User,
                 a: int | None, b: int | None, assignment: str | None = None
                 ) -> dict[str, Any]:
    target = assignments.shown(db, assignment, settings.suite)
    subs = history.judged(db, viewer, owner.id, target)
    a, b = pick(subs, a, b)
    found = history.compare(db, viewer, a, b) if a is not None and b is not None else None
    return {"owner": owner, "subs": list(reversed(subs)), "a": a, "b": b, "cmp": found,
            "chart": chart(history.best_so_far(subs), settings.course_zone)}


@router.get("/history")
def history_page(request: Request, db: SessionDep, settings: SettingsDep, user: PageUser,
                 a: int | None = None, b: int | None = None,
                 student: str | None = None, assignment: str | None = None) -> HTMLResponse:
    owner = whose(db, user, student)
    return render(request, "history.html", user,
                  **page_context(db, settings, user, owner, a, b, assignment))
