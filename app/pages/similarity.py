"""The TAs' similarity pages: the most similar pairs, and one pair side by side."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.core.errors import UserError
from app.course import assignments
from app.db.models import User
from app.pages.rendering import PageUser, render
from app.similarity import sources as similarity_sources
from app.similarity.candidates import fingerprinted, parse_doc_id
from app.similarity.view import overview, pair_view
from app.web.deps import SessionDep, SettingsDep

router = APIRouter(include_in_schema=False)
PASSAGE_CLASSES = 6  # colours of passages (p0..p5 in insight.css), reused in turn


def ta_only(user: User) -> None:
    if not user.is_ta:
        raise UserError("only TAs may open the similarity pages", status=403)


@router.get("/similarity")
def similarity_page(request: Request, db: SessionDep, settings: SettingsDep, user: PageUser,
                    limit: int = 50, assignment: str | None = None) -> HTMLResponse:
    ta_only(user)
    suite = assignments.shown(db, assignment, settings.suite).suite  # default: the first open
    found = overview(db, settings.db_url, suite, max(1, min(limit, 1000)))
    sources = similarity_sources.sources(db, suite)
    ready = fingerprinted(db, [f"p{s.id}" for s in sources])
    return render(request, "similarity.html", user, found=found, sources=sources, ready=ready,
                  suite=suite)


@router.get("/similarity/compare")
def pair_page(request: Request, db: SessionDep, settings: SettingsDep, user: PageUser,
              a: str, b: str, assignment: str | None = None) -> HTMLResponse:
    ta_only(user)
    suite = assignments.shown(db, assignment, settings.suite).suite
    found = pair_view(db, settings.db_url, suite, parse_doc_id(a, "a"),
                      parse_doc_id(b, "b"))
    return render(request, "similarity_pair.html", user, found=found,
                  classes=PASSAGE_CLASSES)
