"""The TA page's user management (htmx fragments inside /admin): create users, import the roster,
sign-in and reset links, tokens, sign-out. Secrets are shown once, in the answer only."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, Response

from app.accounts import audit, management, tokens, users
from app.accounts.signin_links import IssuedLink
from app.core.errors import UserError, not_found
from app.core.net import base_url
from app.core.spreadsheet import csv_text
from app.db.models import User
from app.pages.rendering import PageUser, render
from app.web.deps import SessionDep, SettingsDep

router = APIRouter(prefix="/admin/users", include_in_schema=False)


def page_ta(user: PageUser) -> User:
    if not user.is_ta:
        raise UserError("only TAs may manage users", status=403)
    return user


PageTA = Annotated[User, Depends(page_ta)]


def fragment(request: Request, db: SessionDep, ta: User, **context: Any) -> HTMLResponse:
    """The whole user section again, with a one-time result (links, a token, an error) on top."""
    defaults: dict[str, Any] = {"links": [], "links_csv": "", "new_token": None, "message": "",
                                "token_list": None}
    return render(request, "_admin_users.html", ta, people=management.everyone(db),
                  **{**defaults, **context})


def shown(links: list[IssuedLink], base: str) -> dict[str, Any]:
    """Links as rows to show, and the same as a CSV (a data: URL) for mail merges."""
    rows = [{"username": k.username, "email": k.email, "link": k.url(base), "purpose": k.purpose,
             "expires_at": k.expires_at.isoformat(timespec="minutes") + "Z"} for k in links]
    columns = ["username", "email", "link", "purpose", "expires_at"]
    text = csv_text([columns, *([row[c] for c in columns] for row in rows)])
    shown_rows = [{**row, "expires": k.expires_at} for row, k in zip(rows, links, strict=True)]
    return {"links": shown_rows,
            "links_csv": "data:text/csv;charset=utf-8," + quote(text)}


def named(db: SessionDep, username: str) -> User:
    user = users.get_by_username(db, username)
    if user is None:
        raise not_found("user")
    return user


ROSTER_EXAMPLE = """username,display name,email,role
alice,Alice Chen,alice@example.edu,student
bob,Bob Lin,bob@example.edu,
tara,Tara Wu,tara@example.edu,ta
"""


@router.get("/roster-example.csv")
def roster_example(_ta: PageTA) -> Response:
    """A roster the import takes as it is: the format by example (a header row, an empty role)."""
    return Response(ROSTER_EXAMPLE, media_type="text/csv; charset=utf-8", headers={
        "Content-Disposition": 'attachment; filename="roster-example.csv"'})


@router.get("")
def section(request: Request, db: SessionDep, ta: PageTA) -> HTMLResponse:
    return fragment(request, db, ta)


@router.post("")
def create(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
           username: Annotated[str, Form()], role: Annotated[str, Form()] = "student",
           display_name: Annotated[str, Form()] = "", email: Annotated[str, Form()] = ""
           ) -> HTMLResponse:
    try:
        if users.get_by_username(db, username) is not None:
            raise UserError(f"user {username!r} exists already", field="username")
        user = users.add_user(db, username, role, None, display_name, email)
        link = users.invite_if_needed(db, user, settings, ta)
    except UserError as exc:
        db.rollback()
        return fragment(request, db, ta, message=exc.detail)
    audit.record(db, ta, "create-user", username)
    db.commit()
    return fragment(request, db, ta, **shown([link] if link else [], base_url(request, settings)))


@router.post("/import")
async def import_roster(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
                        roster: Annotated[UploadFile, File()]) -> HTMLResponse:
    try:
        report = management.import_upload(db, ta, await roster.read(), settings)
    except UserError as exc:
        db.rollback()
        return fragment(request, db, ta, message=exc.detail)
    message = f"Imported: {len(report.created)} created, {len(report.updated)} updated."
    return fragment(request, db, ta, message=message,
                    **shown(report.links, base_url(request, settings)))


@router.post("/{username}/reset-link")
def reset_link(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
               username: str) -> HTMLResponse:
    link = users.reset_link(db, named(db, username), settings, ta)
    audit.record(db, ta, "reset-link", username)
    db.commit()
    return fragment(request, db, ta, **shown([link], base_url(request, settings)))


@router.post("/{username}/tokens")
def new_token(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
              username: str, name: Annotated[str, Form()] = "cli") -> HTMLResponse:
    issued = tokens.issue(db, named(db, username), name, settings.personal_token_days * 86400,
                           keep=settings.max_tokens_per_user)
    audit.record(db, ta, "create-token", username, name=issued.name)
    db.commit()
    return fragment(request, db, ta, new_token={"username": username, "token": issued})


@router.get("/{username}/tokens")
def token_list(request: Request, db: SessionDep, ta: PageTA, username: str) -> HTMLResponse:
    return fragment(request, db, ta, token_list={
        "username": username, "tokens": tokens.listing(db, named(db, username))})


@router.post("/{username}/tokens/{token_id}/revoke")
def revoke_token(request: Request, db: SessionDep, ta: PageTA, username: str,
                 token_id: int) -> HTMLResponse:
    user = named(db, username)
    tokens.revoke(db, user, token_id)
    audit.record(db, ta, "revoke-token", username, token_id=token_id)
    db.commit()
    return fragment(request, db, ta, message=f"Revoked a token of {username}.", token_list={
        "username": username, "tokens": tokens.listing(db, user)})


@router.post("/{username}/sign-out")
def sign_out(request: Request, db: SessionDep, ta: PageTA, username: str) -> HTMLResponse:
    users.sign_out_everywhere(db, named(db, username))
    audit.record(db, ta, "sign-out", username)
    db.commit()
    return fragment(request, db, ta,
                    message=f"{username}: every session ended and every token revoked.")
