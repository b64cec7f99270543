"""The course settings page (/admin/course/settings): the time zone, the submit interval, a new
deadline's late policy and the university's sign-in, changed by a TA without a restart
(app/course/course_settings.py keeps them in the database)."""

from __future__ import annotations

from typing import Annotated
from zoneinfo import available_timezones

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.course import course_settings, deadlines
from app.db.models import User
from app.pages.rendering import render
from app.pages.ta.admin import PageTA
from app.web.deps import SessionDep, SettingsDep

router = APIRouter(include_in_schema=False)
ZONES = sorted(available_timezones())


def view(request: Request, db: Session, settings: Settings, ta: User, message: str,
         template: str) -> HTMLResponse:
    return render(request, template, ta, course=course_settings.current(db, settings),
                  zones=ZONES, policies=deadlines.POLICIES, message=message)


@router.get("/admin/course/settings")
def settings_page(request: Request, db: SessionDep, settings: SettingsDep,
                  ta: PageTA) -> HTMLResponse:
    return view(request, db, settings, ta, "", "course_settings.html")


@router.post("/partials/admin/course/settings")
def save_settings(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
                  timezone: Annotated[str, Form()], submit_interval_s: Annotated[float, Form()],
                  late_policy: Annotated[str, Form()], penalty_per_day: Annotated[float, Form()],
                  penalty_cap: Annotated[float, Form()], oidc_issuer: Annotated[str, Form()] = "",
                  oidc_client_id: Annotated[str, Form()] = "",
                  oidc_client_secret: Annotated[str, Form()] = "",
                  oidc_name: Annotated[str, Form()] = "") -> HTMLResponse:
    draft = course_settings.Draft(timezone.strip(), submit_interval_s, late_policy,
                                  penalty_per_day, penalty_cap, oidc_issuer.strip(),
                                  oidc_client_id.strip(), oidc_client_secret,
                                  oidc_name.strip())
    course_settings.save(db, ta, settings, draft)
    request.app.state.oidc = None  # the sign-in's client is made again with what was saved
    return view(request, db, settings, ta, "course settings saved: in use now",
                "_course_settings.html")
