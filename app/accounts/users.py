"""People: creating users, importing a roster, logging in (throttled), passwords and revocation.

Every account has a way in: a user created without a password gets a one-time sign-in link
(`invite`), which the caller shows once. A new password ends every session, token and link.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import sessions, signin_links, throttle, tokens
from app.accounts.signin_links import IssuedLink
from app.accounts.tokens import issue_token, user_for_token
from app.core.config import Settings
from app.core.errors import UserError
from app.core.security import check_new_password, hash_password, verify_password
from app.core.validation import check_text
from app.db.models import User

__all__ = ["issue_token", "user_for_token"]  # kept here for callers of the old module
ROLES = ("student", "ta")
_USERNAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
ROSTER_COLUMNS = ("username", "display_name", "email", "role")


@dataclass
class ImportReport:
    """What a roster import did."""

    created: list[str] = field(default_factory=list)  # new usernames
    updated: list[str] = field(default_factory=list)  # existing users whose details changed
    links: list[IssuedLink] = field(default_factory=list)  # one per user still without password


def check_user_fields(username: str, role: str, display_name: str = "", email: str = "") -> None:
    """Every field within its column and free of control characters; names the field."""
    if not _USERNAME.fullmatch(username):
        raise UserError(
            f"username {username[:80]!r} must be 1-64 letters, digits, '_', '.' or '-'",
            field="username",
        )
    if role not in ROLES:
        raise UserError(f"role {role[:80]!r} must be student or ta", field="role")
    check_text("display_name", display_name, 200)
    check_text("email", email, 200)


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
    """Create a user, or update the details/password of an existing one."""
    check_user_fields(username, role, display_name, email)
    if password:
        check_new_password(password)
    user = get_by_username(db, username) or User(username=username)
    user.role = role
    user.display_name = display_name or user.display_name or username
    user.email = email or user.email or ""
    db.add(user)
    db.flush()
    if password:
        set_password(db, user, password)
    return user


def invite_if_needed(db: Session, user: User, settings: Settings,
                     created_by: User | None = None) -> IssuedLink | None:
    """A sign-in link for a user who has no password (None for one who has)."""
    if user.password_hash:
        return None
    return signin_links.create(db, user, signin_links.INVITE, settings.signin_link_max_age_s,
                               created_by)


def reset_link(db: Session, user: User, settings: Settings,
               created_by: User | None = None) -> IssuedLink:
    """A link to choose a new password; the old one keeps working until the link is used."""
    return signin_links.create(db, user, signin_links.RESET, settings.signin_link_max_age_s,
                               created_by)


def set_password(db: Session, user: User, password: str) -> None:
    """A new password ends everything the old one let in: sessions, tokens, unused links."""
    check_new_password(password)
    user.password_hash = hash_password(password)
    sign_out_everywhere(db, user)
    signin_links.invalidate(db, user.id)
    db.flush()


def link_rules(address: str, settings: Settings) -> list[throttle.Rule]:
    """What a sign-in link's use counts against: its address, like a login's per-address rule
    (a link names no user until it is found, so there is no account to count for)."""
    return [throttle.Rule(f"link:{address}", settings.login_max_failures_per_address,
                          settings.login_window_s, settings.login_backoff_max_s,
                          "too many unusable sign-in links from your address")]


def redeem_link(db: Session, token: str, password: str, address: str,
                settings: Settings) -> User:
    """Use a sign-in link up and give its user `password` (committed). The link's secret is
    presented like a password, so it goes through the same throttle: guessing at links from
    one address slows down like guessing at passwords (429 + Retry-After)."""
    attempt = throttle.begin(db, link_rules(address, settings))
    try:
        user = signin_links.redeem(db, token)
    except UserError:
        throttle.finish(db, attempt, succeeded=False)
        raise
    set_password(db, user, password)
    throttle.finish(db, attempt, succeeded=True)
    return user


def sign_out_everywhere(db: Session, user: User) -> None:
    sessions.end_all(db, user.id)
    tokens.revoke_all(db, user.id)


def change_password(db: Session, user: User, current: str, new: str, address: str,
                    settings: Settings, device: str | None = None) -> None:
    """A new password for whoever knows the current one, checked through the login throttle
    (`log_in`): a borrowed session guesses no faster than a login form would."""
    try:
        log_in(db, user.username, current, address, settings, device)
    except UserError as exc:
        if exc.status == 429:
            raise
        raise UserError("the current password is wrong", status=403,
                        field="current_password") from exc
    set_password(db, user, new)


def parse_roster(text: str) -> list[dict[str, str]]:
    """Rows of a roster CSV (header: username, display name, email, role); all checked first."""
    try:
        rows = [r for r in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in r)]
    except csv.Error as exc:  # e.g. a field beyond the csv module's limit
        raise UserError(f"the roster is not a readable CSV: {exc}", field="roster") from exc
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
            check_user_fields(**entry)
        except UserError as exc:
            raise UserError(f"roster row {line}: {exc.detail}", field="roster") from exc
        parsed.append(entry)
    return parsed


def import_roster(db: Session, text: str, settings: Settings,
                  created_by: User | None = None) -> ImportReport:
    """Create or update every roster row (a bad row rejects the whole file); a sign-in link for
    each user who has no password yet."""
    report = ImportReport()
    for entry in parse_roster(text):
        existed = get_by_username(db, entry["username"]) is not None
        user = add_user(db, **entry)
        (report.updated if existed else report.created).append(entry["username"])
        link = invite_if_needed(db, user, settings, created_by)
        if link is not None:
            report.links.append(link)
    return report


def authenticate(db: Session, username: str, password: str) -> User:
    """The user whose password this is (no throttling: for trusted callers and tests). An
    unknown name, an account without a password and a disabled one cost one password check
    too, so the answer's time tells nothing about which accounts exist or have a password."""
    user = get_by_username(db, username)
    matches = verify_password(password, user.password_hash if user else None)
    if user is None or not user.active or not matches:
        raise UserError("wrong username or password", status=401, field="password")
    return user


def login_rules(username: str, address: str, device: str | None,
                settings: Settings) -> list[throttle.Rule]:
    """What a login attempt counts against. From a browser that signed in as this user before
    (`device`, app/core/known_device.py) only that browser's own failures count: nobody else's
    guessing slows the owner there. Otherwise per username and address, per address, and per
    username across addresses, each slowing (never locking) past its limit; the last one bounds
    the guesses on one account from anywhere (docs/deployment.md says how many per hour)."""
    name, window, cap = username.lower(), settings.login_window_s, settings.login_backoff_max_s
    if device:
        return [throttle.Rule(f"device:{device}:{name}", settings.login_max_failures, window,
                              cap, personal=True)]
    spray = ("too many failed logins for this account from several places (someone may be "
             "guessing): sign in from a browser you used before, or ask a TA for a sign-in link")
    return [throttle.Rule(f"pair:{name}:{address}", settings.login_max_failures, window, cap,
                          personal=True),
            throttle.Rule(f"addr:{address}", settings.login_max_failures_per_address, window,
                          cap, "too many failed logins from your address"),
            throttle.Rule(f"user:{name}", settings.login_user_failures, window, cap, spray)]


def log_in(db: Session, username: str, password: str, address: str,
           settings: Settings, device: str | None = None) -> User:
    """`authenticate`, throttled (`login_rules`; 429 + Retry-After while a wait runs): the one
    door for every way a password is presented (the login page, /api/auth/token, changing a
    password), so no way in guesses faster than another."""
    attempt = throttle.begin(db, login_rules(username, address, device, settings))
    try:
        user = authenticate(db, username, password)
    except UserError:
        throttle.finish(db, attempt, succeeded=False)
        raise
    throttle.finish(db, attempt, succeeded=True)
    return user
