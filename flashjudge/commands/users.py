"""`flashjudge users`: import a roster CSV or add one user, straight into the database."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.core.config import get_settings
from app.core.errors import UserError
from app.db.migrate import upgrade
from app.db.session import session_scope
from app.services import users


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("users", help="manage users: import a roster, add one")
    sub = parser.add_subparsers(dest="users_command", metavar="ACTION", required=True)
    imp = sub.add_parser("import", help="import a roster CSV: username, display name, email, role")
    imp.add_argument("roster", type=Path)
    imp.set_defaults(func=import_roster)
    add = sub.add_parser("add", help="add (or update) one user")
    add.add_argument("name")
    add.add_argument("--role", choices=users.ROLES, default="student")
    add.add_argument("--password", help="login password (argon2-hashed in the database)")
    add.add_argument("--display-name", default="")
    add.add_argument("--email", default="")
    add.set_defaults(func=add_user)
    token = sub.add_parser("token", help="print a new personal API token for a user")
    token.add_argument("name")
    token.set_defaults(func=make_token)


def _db_url() -> str:
    url = get_settings().db_url
    upgrade(url)
    return url


def import_roster(args: argparse.Namespace) -> int:
    try:
        text = args.roster.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"flashjudge users import: cannot read {args.roster}: {exc}", file=sys.stderr)
        return 2
    try:
        with session_scope(_db_url()) as db:
            report = users.import_roster(db, text)
    except UserError as exc:
        print(f"flashjudge users import: {exc.detail}", file=sys.stderr)
        return 2
    print(f"created {len(report.created)}, updated {len(report.updated)}")
    return 0


def add_user(args: argparse.Namespace) -> int:
    try:
        with session_scope(_db_url()) as db:
            user = users.add_user(db, args.name, args.role, args.password, args.display_name,
                                  args.email)
            print(f"{user.username} ({user.role})")
    except UserError as exc:
        print(f"flashjudge users add: {exc.detail}", file=sys.stderr)
        return 2
    return 0


def make_token(args: argparse.Namespace) -> int:
    with session_scope(_db_url()) as db:
        user = users.get_by_username(db, args.name)
        if user is None:
            print(f"flashjudge users token: no user {args.name!r}", file=sys.stderr)
            return 2
        print(users.issue_token(db, user, "cli", None))
    return 0
