"""`flashjudge users`: import a roster, add a user, make sign-in/reset links and API tokens,
straight into the database. Nobody is left without a way in: a user without a password gets a
one-time sign-in link, printed here (the links' base is FLASHJUDGE_PUBLIC_URL)."""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from app.accounts import tokens, users
from app.accounts.signin_links import IssuedLink
from app.core.config import Settings, get_settings
from app.core.errors import UserError
from app.db.migrate import upgrade
from app.db.session import session_scope
from app.wiring import wired_sessions
from flashjudge_cli.shell_actor import as_shell

LOCAL_URL = "http://127.0.0.1:8000"  # `flashjudge serve`'s default, when no public URL is set


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("users", help="manage users: roster, add, links, tokens")
    sub = parser.add_subparsers(dest="users_command", metavar="ACTION", required=True)
    imp = sub.add_parser("import", help="import a roster CSV: username, display name, email, "
                         "role; prints a sign-in link for everyone without a password")
    imp.add_argument("roster", type=Path)
    imp.add_argument("--links", type=Path, help="write the links CSV here (default: stdout)")
    imp.set_defaults(func=as_shell(import_roster))
    add = sub.add_parser("add", help="add (or update) one user; without --password, prints a "
                         "one-time sign-in link")
    add.add_argument("name")
    add.add_argument("--role", choices=users.ROLES, default="student")
    add.add_argument("--password", help="login password (argon2-hashed in the database)")
    add.add_argument("--display-name", default="")
    add.add_argument("--email", default="")
    add.set_defaults(func=as_shell(add_user))
    reset = sub.add_parser("reset", help="print a one-time link to choose a new password")
    reset.add_argument("name")
    reset.set_defaults(func=as_shell(reset_link))
    token = sub.add_parser("token", help="print a new personal API token for a user")
    token.add_argument("name")
    token.add_argument("--label", default="cli", help="the token's name in listings")
    token.add_argument("--days", type=int, default=None, help="lifetime (default 120)")
    token.set_defaults(func=as_shell(make_token))


def _settings() -> Settings:
    settings = get_settings()
    upgrade(settings.db_url, suite=settings.suite)
    wired_sessions(settings.db_url)  # roster changes move the board (names, roles)
    return settings


def base(settings: Settings) -> str:
    if not settings.public_url:
        print(f"note: FLASHJUDGE_PUBLIC_URL is not set; links point at {LOCAL_URL}",
              file=sys.stderr)
    return settings.public_url or LOCAL_URL


def fail(action: str, message: str) -> int:
    print(f"flashjudge users {action}: {message}", file=sys.stderr)
    return 2


def write_links(links: list[IssuedLink], url_base: str, out: Path | None) -> None:
    """The links as CSV (username, email, link, expires), for a mail merge."""
    handle = out.open("w", newline="") if out else sys.stdout
    writer = csv.writer(handle)
    writer.writerow(["username", "email", "link", "expires_utc"])
    for link in links:
        writer.writerow([link.username, link.email, link.url(url_base),
                         link.expires_at.isoformat(timespec="minutes")])
    if out:
        handle.close()


def import_roster(args: argparse.Namespace) -> int:
    try:
        text = args.roster.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        return fail("import", f"cannot read {args.roster}: {exc}")
    settings = _settings()
    try:
        with session_scope(settings.db_url) as db:
            report = users.import_roster(db, text, settings)
    except UserError as exc:
        return fail("import", exc.detail)
    print(f"created {len(report.created)}, updated {len(report.updated)}; "
          f"{len(report.links)} without a password get a one-time sign-in link"
          + (f" (in {args.links})" if args.links and report.links else ""), file=sys.stderr)
    if report.links:
        write_links(report.links, base(settings), args.links)
    return 0


def add_user(args: argparse.Namespace) -> int:
    settings = _settings()
    try:
        with session_scope(settings.db_url) as db:
            user = users.add_user(db, args.name, args.role, args.password, args.display_name,
                                  args.email)
            link = users.invite_if_needed(db, user, settings)
            print(f"{user.username} ({user.role})")
    except UserError as exc:
        return fail("add", exc.detail)
    if link is not None:
        print(f"{link.username} has no password: send them this one-time sign-in link "
              f"(valid until {link.expires_at:%Y-%m-%d %H:%M} UTC):\n{link.url(base(settings))}")
    return 0


def reset_link(args: argparse.Namespace) -> int:
    settings = _settings()
    with session_scope(settings.db_url) as db:
        user = users.get_by_username(db, args.name)
        if user is None:
            return fail("reset", f"no user {args.name!r}")
        link = users.reset_link(db, user, settings)
    print(f"one-time link for {link.username} to choose a new password "
          f"(valid until {link.expires_at:%Y-%m-%d %H:%M} UTC):\n{link.url(base(settings))}")
    return 0


def make_token(args: argparse.Namespace) -> int:
    settings = _settings()
    try:
        with session_scope(settings.db_url) as db:
            user = users.get_by_username(db, args.name)
            if user is None:
                return fail("token", f"no user {args.name!r}")
            days = tokens.token_days(args.days or settings.personal_token_days)
            print(tokens.issue(db, user, args.label, days * 86400,
                               keep=settings.max_tokens_per_user).token)
    except UserError as exc:
        return fail("token", exc.detail)
    return 0
