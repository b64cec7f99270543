"""The custom-run pages: the upload form with "Your recent runs" (kept up to date while a run
waits), and one run's result, read like a submission's: the verdict of your output against the
reference, the max error, the first mismatches, the error map, and the reference to download.

A waiting run's page and the list ask for their fragment again every few seconds until the run
is done (custom runs are few per student: at most `custom_runs_per_hour`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.core.config import Settings
from app.custom_runs import runs
from app.db.models import CustomRun
from app.pages.rendering import PageUser, render
from app.pages.views.error_maps import map_view
from app.web.deps import SessionDep, SettingsDep
from flashjudge.contract import Status

router = APIRouter(include_in_schema=False)
# the comparison's status -> the verdict it is in the judge's words
VERDICTS = {"pass": "AC", "fail": "WA", "nonfinite": "WA", "size": "NO"}


def mistake_line(report: dict[str, Any]) -> str:
    """The one line naming the classic mistake the output matches, when the comparison found
    one (the mistake catalogue fills `report["mistake"]`)."""
    found = report.get("mistake")
    if isinstance(found, dict):
        found = found.get("line") or found.get("message")
    return found if isinstance(found, str) else ""


def run_view(run: CustomRun, settings: Settings) -> dict[str, Any]:
    """What the pages show of one run: the API's view and what is drawn from its report."""
    view = runs.to_dict(run, settings)
    report = view["report"] or {}
    view.update(report=report, verdict=VERDICTS.get(report.get("status", "")),
                shape=f"{run.B} × {run.N} × {run.d}", created=run.created_at,
                expires=runs.expires_at(run, settings),
                output_bytes=4 * run.B * run.N * run.d, live=run.status != Status.DONE,
                compared=run.has_own_output, mistake=mistake_line(report),
                map=map_view(report.get("error_map"), f"custom run {run.id}"))
    return view


def runs_context(db: SessionDep, settings: SettingsDep, user: PageUser) -> dict[str, Any]:
    shown = [run_view(r, settings) for r in runs.recent_for(db, user)]
    return {"runs": shown, "any_live": any(r["live"] for r in shown)}


@router.get("/custom")
def custom_page(request: Request, db: SessionDep, settings: SettingsDep,
                user: PageUser) -> HTMLResponse:
    return render(request, "custom.html", user, **runs_context(db, settings, user))


@router.get("/partials/custom-runs")
def runs_partial(request: Request, db: SessionDep, settings: SettingsDep,
                 user: PageUser) -> HTMLResponse:
    """The list again: the page asks every few seconds while one of its runs waits."""
    return render(request, "_custom_runs.html", user, **runs_context(db, settings, user))


@router.get("/custom/{run_id}")
def run_page(request: Request, db: SessionDep, settings: SettingsDep, user: PageUser,
             run_id: int) -> HTMLResponse:
    run = run_view(runs.get_visible(db, user, run_id), settings)
    return render(request, "custom_run.html", user, run=run)


@router.get("/partials/custom/{run_id}")
def run_partial(request: Request, db: SessionDep, settings: SettingsDep, user: PageUser,
                run_id: int) -> HTMLResponse:
    run = run_view(runs.get_visible(db, user, run_id), settings)
    return render(request, "_custom_run.html", user, run=run)
