"""TA endpoints for running a course: assignments (create, change, open, close, export,
import) and terms (archive, start the next). Pages: app/pages/ta/course_admin.py."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.course import assignment_config, assignments, terms
from app.db.models import Assignment, Submission, Term
from app.schemas.course_admin import (
    AssignmentConfigIn,
    AssignmentOutTA,
    ConfigText,
    TermIn,
    TermOut,
)
from app.web.deps import SessionDep, SettingsDep, TAUser

router = APIRouter(prefix="/api/admin", tags=["TA"])


def out(db: Session, row: Assignment) -> AssignmentOutTA:
    count = db.scalar(select(func.count()).select_from(Submission)
                      .where(Submission.assignment_id == row.id)) or 0
    return AssignmentOutTA(**assignment_config.as_data(assignment_config.of(row)),
                           term=row.term.name, archived=row.term.archived_at is not None,
                           submissions=count)


def in_term(db: Session, settings_suite: str, term: str | None) -> list[Assignment]:
    if term is None:
        return assignments.in_term(db, settings_suite)
    return list(db.scalars(select(Assignment).where(
        Assignment.term_id == terms.by_name(db, term).id).order_by(Assignment.position)))


@router.get("/assignments", response_model=list[AssignmentOutTA])
def listing(db: SessionDep, settings: SettingsDep, _ta: TAUser,
            term: str | None = None) -> list[AssignmentOutTA]:
    """The assignments of a term (default: the current one), in order."""
    return [out(db, a) for a in in_term(db, settings.suite, term)]


@router.post("/assignments", response_model=AssignmentOutTA, status_code=201)
def create(db: SessionDep, settings: SettingsDep, ta: TAUser,
           body: AssignmentConfigIn) -> AssignmentOutTA:
    """A new assignment in the current term (audited)."""
    config = assignment_config.parse(body.model_dump(), "assignment")
    return out(db, assignment_config.apply(db, ta, config, settings.suite, create=True))


@router.put("/assignments/{name}", response_model=AssignmentOutTA)
def change(db: SessionDep, settings: SettingsDep, ta: TAUser, name: str,
           body: AssignmentConfigIn) -> AssignmentOutTA:
    """Change an assignment of the current term (its name stays; audited)."""
    if body.name != name:
        raise UserError(f"name: the body names {body.name!r}, the address {name!r}",
                        field="name")
    config = assignment_config.parse(body.model_dump(), "assignment")
    return out(db, assignment_config.apply(db, ta, config, settings.suite))


@router.post("/assignments/{name}/{state}", response_model=AssignmentOutTA)
def open_or_close(db: SessionDep, settings: SettingsDep, ta: TAUser, name: str,
                  state: str) -> AssignmentOutTA:
    """Open ("open") or close ("close") an assignment for students' uploads."""
    if state not in ("open", "close"):
        raise UserError("state must be 'open' or 'close'", field="state")
    current = assignment_config.of(assignments.named(db, name, settings.suite))
    config = assignment_config.Config(**asdict(current) | {"open": state == "open"})
    return out(db, assignment_config.apply(db, ta, config, settings.suite))


@router.get("/assignments/{name}/export", response_model=ConfigText)
def export(db: SessionDep, settings: SettingsDep, _ta: TAUser, name: str,
           format: str = "toml") -> ConfigText:  # noqa: A002 - the query parameter's name
    """An assignment's configuration as TOML or JSON (never its secret seed)."""
    row = assignments.named(db, name, settings.suite)
    return ConfigText(format=format, text=assignment_config.export(row, format))


@router.post("/assignments/import", response_model=AssignmentOutTA)
def import_config(db: SessionDep, settings: SettingsDep, ta: TAUser,
                  body: ConfigText) -> AssignmentOutTA:
    """Create the assignment a configuration describes, or change the one of its name."""
    return out(db, assignment_config.import_text(db, ta, body.text, body.format,
                                                 settings.suite))


def term_out(db: Session, term: Term, current: Term | None) -> TermOut:
    names = list(db.scalars(select(Assignment.name).where(Assignment.term_id == term.id)
                            .order_by(Assignment.position, Assignment.id)))
    return TermOut(name=term.name, current=current is not None and term.id == current.id,
                   archived_at=term.archived_at.isoformat() + "Z" if term.archived_at else None,
                   assignments=names)


@router.get("/terms", response_model=list[TermOut])
def term_listing(db: SessionDep, settings: SettingsDep, _ta: TAUser) -> list[TermOut]:
    """Every term, newest first."""
    assignments.in_term(db, settings.suite)  # a fresh course's first term exists
    current = assignments.current_term(db)
    return [term_out(db, t, current) for t in terms.listing(db)]


@router.post("/terms/archive", response_model=TermOut)
def archive(db: SessionDep, ta: TAUser) -> TermOut:
    """Archive the current term: its assignments and submissions become read-only."""
    term = terms.archive(db, ta)
    return term_out(db, term, None)


@router.post("/terms/{name}/rename", response_model=TermOut)
def rename(db: SessionDep, ta: TAUser, name: str, body: TermIn) -> TermOut:
    """Rename a term (archived ones too): its boards are then found under the new name."""
    term = terms.rename(db, ta, name, body.name)
    return term_out(db, term, assignments.current_term(db))


@router.post("/terms", response_model=TermOut, status_code=201)
def start(db: SessionDep, ta: TAUser, body: TermIn) -> TermOut:
    """Start the next term with the newest term's assignments and no submissions (the current
    term is archived first)."""
    term = terms.start_next(db, ta, body.name)
    return term_out(db, term, term)
