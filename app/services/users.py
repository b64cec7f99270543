"""People: creating users, importing a roster, logging in, bearer tokens."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.core.security import hash_password, new_token, token_hash, verify_password
from app.db.models import ApiToken, User, utcnow

ROLES = ("student", "ta")
_USERNAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
ROSTER_COLUMNS = ("username", "display_name", "email", "role")


@dataclass
class ImportReport:
    """What a roster import did."""

    created: list[str] = field(default_factory=list)  # new usernames
    updated: list[str] = field(default_factory=list)  # existing users whose details changed


def check_user_fields(username: str, role: str) -> None:
    if not _USERNAME.fullmatch(username):
        raise UserError(
            f"username {username!r} must be 1-64 letters, digits, '_', '.' or '-'",
            field="username",
        )
    if role not in ROLES:
        raise UserError(f"role {role!r} must be student or ta", field="role")


def get_by_username(db: Session, username: str) -> User | None:
    return db.scalar(select(User).where(User.username == username))


def add_user(
    db: Session,
    username: str,
    role: str = "student",
    password: str | None = None,
    display_name: str = "",
    email: str = "",
) -> User:
    """Create a user, or update the role/password of an existing one."""
    check_user_fields(username, role)
    user = get_by_username(db, username) or User(username=username)
    user.role = role
    user.display_name = display_name or user.display_name or username
    user.email = email or user.email or ""
    if password:
        user.password_hash = hash_password(password)
    db.add(user)
    db.flush()
    return user


def parse_roster(text: str) -> list[dict[str, str]]:
    """Rows of a roster CSV (header: username, display name, email, role); all checked first."""
    reader = csv.reader(io.StringIO(text))
    rows = [r for r in reader if any(cell.strip() for cell in r)]
    if rows and rows[0] and rows[0][0].strip().lower() == "username":
        rows = rows[1:]
    parsed = []
    for line, row in enumerate(rows, start=1):
        if len(row) != 4:
            raise UserError(
                f"roster row {line}: expected 4 columns (username, display name, email, role), "
                f"got {len(row)}",
                field="roster",
            )
        entry = dict(zip(ROSTER_COLUMNS, (c.strip() for c in row), strict=True))
        entry["role"] = entry["role"].lower() or "student"
        try:
            check_user_fields(entry["username"], entry["role"])
        except UserError as exc:
            raise UserError(f"roster row {line}: {exc.detail}", field="roster") from exc
        parsed.append(entry)
    return parsed


def import_roster(db: Session, text: str) -> ImportReport:
    """Create or update every roster row; a bad row rejects the whole file (nothing changes)."""
    report = ImportReport()
    for entry in parse_roster(text):
        existed = get_by_username(db, entry["username"]) is not None
        add_user(db, **entry)
        (report.updated if existed else report.created).append(entry["username"])
    return report


def authenticate(db: Session, username: str, password: str) -> User:
    user = get_by_username(db, username)
    if user is None or not user.active or not verify_password(password, user.password_hash):
        raise UserError("wrong username or password", status=401, field="password")
    return user


def issue_token(db: Session, user: User, name: str, max_age_s: int | None) -> str:
    """A new bearer token for `user`; None max age means a personal token that does not expire."""
    token = new_token()
    expires = utcnow() + timedelta(seconds=max_age_s) if max_age_s else None
    db.add(ApiToken(user_id=user.id, token_hash=token_hash(token), name=name, expires_at=expires))
    db.flush()
    return token


def user_for_token(db: Session, token: str) -> User:
    row = db.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash(token)))
    if row is None:
        raise UserError("invalid token; log in again or create a new token", status=401)
    if row.expires_at is not None and row.expires_at < utcnow():
        raise UserError("token expired; log in again", status=401)
    if not row.user.active:
        raise UserError("this account is disabled", status=403)
    return row.user
