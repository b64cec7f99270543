"""The TA's course setup page (/admin/course): the current term's assignments (create, change,
open, close, export, import) and the terms (archive, start the next, rename). Each action is an htmx
fragment that answers the refreshed box and what was done; the same services as
/api/admin/assignments and `flashjudge assignment` (app/course/assignment_config.py)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, PlainTextResponse
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import UserError
from app.course import assignment_config, assignments, deadlines, terms
from app.db.models import Submission, User
from app.pages.rendering import render
from app.pages.ta.admin import PageTA
from app.web.deps import SessionDep, SettingsDep

router = APIRouter(include_in_schema=False)


def course_view(db: Session, settings: Settings) -> dict[str, Any]:
    """The assignments of the current term with their configuration and counts, the terms."""
    rows = assignments.in_term(db, settings.suite)
    counts = dict(db.execute(select(Submission.assignment_id, func.count())
                             .group_by(Submission.assignment_id)).all())
    return {"rows": [{"config": assignment_config.of(a), "label": a.label,
                      "submissions": counts.get(a.id, 0)} for a in rows],
            "terms": terms.listing(db), "current": assignments.current_term(db),
            "default_suite": settings.suite,  # what this machine judges: hw4-mini on a CPU
            "visibility": assignment_config.VISIBILITY, "policies": ("refuse", "penalty")}


def box(request: Request, db: Session, settings: Settings, ta: User,
        message: str) -> HTMLResponse:
    return render(request, "_course.html", ta, course=course_view(db, settings),
                  message=message)


@router.get("/admin/course")
def course_page(request: Request, db: SessionDep, settings: SettingsDep,
                ta: PageTA) -> HTMLResponse:
    return render(request, "course.html", ta, course=course_view(db, settings), message="")


def form_config(fields: dict[str, Any], settings: Settings) -> assignment_config.Config:
    """A Config from the page's form (checkboxes are present or absent, numbers are text)."""
    languages = tuple(x.strip() for x in str(fields.get("languages", "")).split(",")
                      if x.strip())
    return assignment_config.Config(
        name=str(fields.get("name", "")).strip(), title=str(fields.get("title", "")),
        suite=str(fields.get("suite", "")).strip(), languages=languages,
        open=bool(fields.get("open")), position=int(fields.get("position") or 0),
        due_at=deadlines.typed(str(fields.get("due_at") or ""), settings.course_zone) or None,
        late_policy=str(fields.get("late_policy", "refuse")),
        penalty_per_day=float(fields.get("penalty_per_day") or 0),
        penalty_cap=float(fields.get("penalty_cap") or 100),
        gpu_model=str(fields.get("gpu_model", "")).strip(),
        visibility=str(fields.get("visibility", "all")),
        hidden_tests=bool(fields.get("hidden_tests")),
        libraries_allowed=bool(fields.get("libraries_allowed")))


@router.post("/partials/admin/course/save")
async def save(request: Request, db: SessionDep, settings: SettingsDep,
               ta: PageTA) -> HTMLResponse:
    """Create (the new-assignment form) or change an assignment."""
    fields = dict(await request.form())
    create = fields.get("create") == "1"
    row = assignment_config.apply(db, ta, form_config(fields, settings), settings.suite,
                                  create=create)
    return box(request, db, settings, ta, f"{row.name} {'created' if create else 'saved'}")


@router.post("/partials/admin/course/{name}/{state}")
def open_or_close(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
                  name: str, state: str) -> HTMLResponse:
    if state not in ("open", "close"):
        raise UserError("state must be 'open' or 'close'", field="state")
    current = asdict(assignment_config.of(assignments.named(db, name, settings.suite)))
    config = assignment_config.Config(**current | {"open": state == "open"})
    assignment_config.apply(db, ta, config, settings.suite)
    return box(request, db, settings, ta, f"{name} {'opened' if state == 'open' else 'closed'}")


@router.get("/admin/course/{name}/export")
def export(db: SessionDep, settings: SettingsDep, _ta: PageTA, name: str,
           format: str = "toml") -> PlainTextResponse:  # noqa: A002 - the query's name
    """The configuration as a file to keep (never the secret seed)."""
    text = assignment_config.export(assignments.named(db, name, settings.suite), format)
    return PlainTextResponse(text, headers={
        "Content-Disposition": f'attachment; filename="{name}.{format}"'})


@router.post("/partials/admin/course/import")
def import_config(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
                  text: Annotated[str, Form()],
                  format: Annotated[str, Form()] = "toml") -> HTMLResponse:  # noqa: A002
    row = assignment_config.import_text(db, ta, text, format, settings.suite)
    return box(request, db, settings, ta, f"{row.name} imported")


@router.post("/partials/admin/course/archive")
def archive(request: Request, db: SessionDep, settings: SettingsDep,
            ta: PageTA) -> HTMLResponse:
    term = terms.archive(db, ta)
    return box(request, db, settings, ta, f"term {term.name} archived: read-only")


@router.post("/partials/admin/course/rename")
def rename_term(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
                term: Annotated[str, Form()], name: Annotated[str, Form()]) -> HTMLResponse:
    renamed = terms.rename(db, ta, term, name.strip())
    return box(request, db, settings, ta, f"term {term} is now {renamed.name}")


@router.post("/partials/admin/course/next")
def next_term(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
              name: Annotated[str, Form()]) -> HTMLResponse:
    term = terms.start_next(db, ta, name.strip())
    return box(request, db, settings, ta, f"term {term.name} started")
