"""The TA page's "Borrowed kernels" section: the current term's BK results per assignment, with
one click to allow library kernels for an assignment (and judge its BK submissions again) or
to forbid them again (app/submissions/library_rule.py). The rule students read: /rules."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import UserError
from app.db.models import User
from app.pages.rendering import PageUser, render
from app.pages.ta.admin import PageTA
from app.submissions import library_rule
from app.web.deps import SessionDep, SettingsDep

router = APIRouter(include_in_schema=False)


def section(request: Request, db: Session, settings: Settings, ta: User,
            message: str = "") -> HTMLResponse:
    return render(request, "_admin_borrowed.html", ta, message=message,
                  listed=library_rule.borrowed_results(db, settings))


@router.get("/admin/borrowed")
def borrowed_section(request: Request, db: SessionDep, settings: SettingsDep,
                     ta: PageTA) -> HTMLResponse:
    return section(request, db, settings, ta)


@router.post("/partials/admin/borrowed/{name}/{state}")
def allow_or_forbid(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
                    name: str, state: str) -> HTMLResponse:
    if state not in ("allow", "forbid"):
        raise UserError("state must be 'allow' or 'forbid'", field="state")
    said = library_rule.set_libraries_allowed(db, ta, name, state == "allow", settings)
    return section(request, db, settings, ta, said)


@router.get("/rules")
def rules(request: Request, user: PageUser) -> HTMLResponse:
    """The judge's rules in words, for the link under a BK verdict."""
    return render(request, "rules.html", user)
