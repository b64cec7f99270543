"""What every page is made with: the templates and their filters, `render` (a whole page shows the
session's notice and the TAs' announcements on top), and the page's signed-in user.

The pages themselves are one module per resource beside this one (app/pages/submissions.py for
app/api/submissions.py, ...); what they draw with is app/pages/views/. The two addresses that
belong to no resource, `/` and `/favicon.ico`, are served here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from app.core.errors import UserError
from app.db.models import Announcement, User
from app.db.session import session_factory
from app.notices import announcements
from app.pages.views import clock
from app.pages.views.template_helpers import ago, plain_text, verdict_class
from app.web.deps import MaybeUser
from flashjudge.timefmt import seconds_text

templates = Jinja2Templates(directory=Path(__file__).resolve().parent.parent / "templates")
templates.env.globals["verdict_class"] = verdict_class
templates.env.filters["ago"] = ago
templates.env.filters["secs"] = seconds_text
templates.env.filters["when"] = clock.when  # in the course's time zone, with its offset
templates.env.filters["when_text"] = clock.when_text
templates.env.filters["picker_value"] = clock.picker_value  # a datetime-local input's value
templates.env.globals["zone_note"] = clock.zone_note
templates.env.filters["plain_text"] = plain_text  # announcements: text and links only
router = APIRouter(include_in_schema=False)
FAVICON = Path(__file__).resolve().parent.parent / "static" / "favicon.ico"


def page_user(user: MaybeUser) -> User:
    if user is None:
        raise UserError("log in first", status=401)
    return user


PageUser = Annotated[User, Depends(page_user)]


def render(request: Request, name: str, user: User | None, **context: Any) -> HTMLResponse:
    """A page (or a fragment, named "_..."); a whole page shows the session's notice once."""
    context.update(user=user, csrf=request.session.get("csrf", ""))
    if not name.startswith("_") and "notice" in request.session:
        context.setdefault("flash", request.session.pop("notice"))
    if not name.startswith("_") and user is not None and "announcements" not in context:
        context["announcements"] = announcements_for(request, user)
    return templates.TemplateResponse(request, name, context)


def announcements_for(request: Request, user: User) -> list[Announcement]:
    """What the TAs announced, for the top of a whole page (one short query of its own: the
    pages' sessions are closed or busy by the time they render)."""
    with session_factory(request.app.state.settings.db_url)() as db:
        shown = announcements.current(db, user, announcements.SHOWN)
        for row in shown:
            db.expunge(row)
        return shown


@router.get("/favicon.ico")
def favicon() -> FileResponse:
    """Browsers ask for it on every page whatever base.html links: a 404 each time otherwise."""
    return FileResponse(FAVICON, media_type="image/x-icon",
                        headers={"Cache-Control": "public, max-age=86400"})


@router.get("/")
def home(user: MaybeUser) -> Response:
    return RedirectResponse("/submit" if user else "/login", status_code=303)
