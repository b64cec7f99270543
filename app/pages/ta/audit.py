"""The TAs' audit page: every TA action (and refused sign-in) the audit log holds, filtered by
actor, action, target and days, 50 to a page. A plain GET form: the URL is the filter, so a
TA can bookmark or paste one."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from app.accounts import audit
from app.core.errors import UserError
from app.pages.rendering import render
from app.pages.ta.admin import PageTA
from app.web.deps import SessionDep, SettingsDep

router = APIRouter(include_in_schema=False)
Text = Annotated[str, Query(max_length=200)]


@router.get("/admin/audit")
def audit_page(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
               actor: Text = "", action: Text = "", target: Text = "", since: Text = "",
               until: Text = "", page: Annotated[int, Query(ge=1, le=1_000_000)] = 1
               ) -> HTMLResponse:
    fields = {"actor": actor, "action": action, "target": target, "since": since,
              "until": until}
    error, found = "", None
    try:
        filters = audit.filters_from(actor, action, target, since, until, settings.course_zone)
        found = audit.search(db, filters, page)
    except UserError as exc:
        error = exc.detail
    return render(request, "audit.html", ta, fields=fields, error=error, found=found,
                  actions=audit.actions(db), actors=audit.actors(db), system=audit.SYSTEM,
                  link=lambda n: "/admin/audit?" + urlencode({**fields, "page": n}))
