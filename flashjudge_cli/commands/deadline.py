"""`flashjudge deadline`: an assignment's due time, late policy and extensions, in this
deployment's database (the same rows the TA page edits; every change is audited). The first
argument names the assignment (a deployment's first one is named after its suite: hw4).

    flashjudge deadline set hw4 2026-12-01T23:59+08:00 --late penalty --per-day 10 --cap 50
    flashjudge deadline show hw4
    flashjudge deadline extend hw4 alice 2026-12-03T23:59+08:00
    flashjudge deadline unextend hw4 alice
    flashjudge deadline clear hw4
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy.orm import Session

from app.core.config import get_settings
from app.core.errors import UserError
from app.course import assignments, course_settings, deadlines
from app.db.migrate import upgrade
from app.db.models import Assignment
from app.db.session import session_scope
from app.wiring import wired_sessions
from flashjudge.timefmt import moment_text
from flashjudge_cli.shell_actor import as_shell

DUE_HELP = "ISO 8601 with a UTC offset, e.g. 2026-12-01T23:59+08:00 or 2026-12-01T15:59Z"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("deadline", help="set an assignment's due time, late "
                                                    "policy and extensions")
    sub = parser.add_subparsers(dest="deadline_command", metavar="ACTION", required=True)
    put = sub.add_parser("set", help="set (or change) an assignment's due time and late policy")
    put.add_argument("suite", metavar="ASSIGNMENT")
    put.add_argument("due", help=DUE_HELP)
    put.add_argument("--late", choices=deadlines.POLICIES, default="refuse",
                     help="after the due time: refuse uploads, or accept them with a penalty")
    put.add_argument("--per-day", type=float, default=0.0,
                     help="penalty: percent off the score per started day late")
    put.add_argument("--cap", type=float, default=100.0, help="penalty: percent at most")
    put.set_defaults(func=run, action=set_deadline)
    show = sub.add_parser("show", help="print an assignment's deadline and extensions")
    show.add_argument("suite", nargs="?", default=None, metavar="ASSIGNMENT",
                      help="default: the first open one")
    show.set_defaults(func=run, action=show_deadline)
    clear = sub.add_parser("clear", help="remove an assignment's deadline and its extensions")
    clear.add_argument("suite", metavar="ASSIGNMENT")
    clear.set_defaults(func=run, action=clear_deadline)
    extend = sub.add_parser("extend", help="give one student a later due time")
    extend.add_argument("suite", metavar="ASSIGNMENT")
    extend.add_argument("username")
    extend.add_argument("due", help=DUE_HELP)
    extend.set_defaults(func=run, action=extend_deadline)
    unextend = sub.add_parser("unextend", help="take a student's extension back")
    unextend.add_argument("suite", metavar="ASSIGNMENT")
    unextend.add_argument("username")
    unextend.set_defaults(func=run, action=unextend_deadline)


Action = Callable[[Session, argparse.Namespace], str]


@as_shell
def run(args: argparse.Namespace) -> int:
    """Run the chosen action against the configured database; a refusal is exit status 2."""
    url = get_settings().db_url
    upgrade(url)
    wired_sessions(url)  # the change feed and the standing see what it writes
    try:
        with session_scope(url) as db:
            print(args.action(db, args))
    except UserError as exc:
        print(f"flashjudge deadline {args.deadline_command}: {exc.detail}", file=sys.stderr)
        return 2
    return 0


def chosen(db: Session, args: argparse.Namespace) -> Assignment:
    """The assignment named on the command line (the first open one when none is)."""
    return assignments.shown(db, args.suite, get_settings().suite)


def set_deadline(db: Session, args: argparse.Namespace) -> str:
    deadlines.set_deadline(db, None, chosen(db, args), deadlines.parse_due(args.due, "due"),
                           args.late, args.per_day, args.cap)
    return describe(db, args.suite)


def show_deadline(db: Session, args: argparse.Namespace) -> str:
    return describe(db, chosen(db, args).name)


def clear_deadline(db: Session, args: argparse.Namespace) -> str:
    if deadlines.clear_deadline(db, None, chosen(db, args)):
        return f"{args.suite}: deadline removed"
    return f"{args.suite}: had no deadline"


def extend_deadline(db: Session, args: argparse.Namespace) -> str:
    deadlines.grant_extension(db, None, chosen(db, args), args.username,
                              deadlines.parse_due(args.due, "due"))
    return describe(db, args.suite)


def unextend_deadline(db: Session, args: argparse.Namespace) -> str:
    if deadlines.revoke_extension(db, None, chosen(db, args), args.username):
        return f"{args.suite}: {args.username}'s extension revoked"
    return f"{args.suite}: {args.username} had no extension"


def describe(db: Session, suite: str) -> str:
    """The deadline, its policy, the time left by the server's clock, and the extensions; times
    in the course's zone with its offset, as the pages show them."""
    rule = deadlines.rule_for(db, suite)
    if rule is None or rule.due_at is None:
        return f"{suite}: no deadline"
    due = deadlines.aware(rule.due_at)
    policy = ("late uploads refused" if rule.late_policy == "refuse" else
              f"late uploads lose {rule.penalty_per_day:g}% per started day, at most "
              f"{rule.penalty_cap:g}%")
    left = (due - datetime.now(UTC)).total_seconds()
    when = (f"{deadlines.duration(left)} left" if left >= 0 else
            f"passed {deadlines.duration(-left)} ago")
    zone = course_settings.zone(db, get_settings())
    lines = [f"{suite}: due {moment_text(due, zone)} ({when}); {policy}"]
    lines += [f"  extension: {e.user.username} until {moment_text(e.due_at, zone)}"
              for e in deadlines.extensions(db, suite)]
    return "\n".join(lines)
