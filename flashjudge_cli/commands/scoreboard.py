"""`flashjudge scoreboard`: the standing behind every board (app/scoreboard/standing/),
computed again from the submissions.

    flashjudge scoreboard rebuild   # every row recomputed, the version bumped, pages told
    flashjudge scoreboard check     # recompute without writing; exit status 1 if rows differ

The standing is kept at write time by every commit, and rebuilt on its own when its tables are
empty (a migrated database); `rebuild` is for a repair after SQL that went around the service,
`check` for an audit.
"""

from __future__ import annotations

import argparse

from app.core.config import get_settings
from app.db.migrate import upgrade
from app.db.session import session_scope
from app.scoreboard.standing import maintain
from app.wiring import wired_sessions


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("scoreboard", help="rebuild or check the scoreboard's "
                                                      "standing")
    sub = parser.add_subparsers(dest="scoreboard_command", metavar="ACTION", required=True)
    sub.add_parser("rebuild", help="recompute every board row from the submissions").set_defaults(
        func=rebuild)
    sub.add_parser("check", help="compare the rows with a recomputation (exit 1 if they differ)"
                   ).set_defaults(func=check)


def rebuild(_args: argparse.Namespace) -> int:
    url = get_settings().db_url
    upgrade(url)
    wired_sessions(url)  # as in the service: its writes keep the change feed and the standing
    with session_scope(url) as db:
        version = maintain.rebuild(db)
        rows = maintain.row_count(db)
    print(f"scoreboard: {rows} standing rows rebuilt from the submissions (version {version})")
    return 0


def check(_args: argparse.Namespace) -> int:
    url = get_settings().db_url
    upgrade(url)
    wired_sessions(url)
    with session_scope(url) as db:
        maintain.current_version(db)  # built once, if it never was
        differing = maintain.differences(db)
        db.rollback()
    if differing:
        print(f"scoreboard: {len(differing)} standing rows differ from the submissions, e.g. "
              f"{sorted(differing)[:5]}; run `flashjudge scoreboard rebuild`")
        return 1
    print("scoreboard: the standing matches the submissions")
    return 0
