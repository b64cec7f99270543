"""`flashjudge assignment` and `flashjudge term`: a course's boards and terms, in this
deployment's database (the rows the TA page edits; every change is audited).

    flashjudge assignment list [--term T]
    flashjudge assignment add challenge --suite hw4 --title "Kernel challenge" \\
        --languages cuda-kernel --due 2026-12-10T23:59+08:00 --visibility verdicts --hidden
    flashjudge assignment set challenge --visibility none      # only the options given change
    flashjudge assignment open|close challenge
    flashjudge assignment export hw4 -o hw4.toml               # .json for JSON
    flashjudge assignment import hw4.toml                      # creates it, or changes it
    flashjudge term list | archive | next 2027-spring
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from app.core.config import get_settings
from app.core.errors import UserError
from app.course import assignment_config, assignments, course_settings, deadlines, terms
from app.db.migrate import upgrade
from app.db.session import session_scope
from app.wiring import wired_sessions
from flashjudge.timefmt import moment_text
from flashjudge_cli.shell_actor import as_shell

OPTIONS = {  # option -> (config key, argparse keywords)
    "--title": ("title", {}), "--suite": ("suite", {}),
    "--languages": ("languages", {"help": "comma-separated; '' for every language"}),
    "--due": ("due_at", {"help": "ISO 8601 with its offset; 'none' for no deadline"}),
    "--late": ("late_policy", {"choices": ("refuse", "penalty")}),
    "--per-day": ("penalty_per_day", {"type": float}), "--cap": ("penalty_cap", {"type": float}),
    "--gpu-model": ("gpu_model", {"help": "only this GPU model judges it ('' : any)"}),
    "--visibility": ("visibility", {"choices": assignment_config.VISIBILITY,
                                    "help": "what students see before the due time"}),
    "--position": ("position", {"type": int}),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("assignment", help="the course's assignments")
    sub = parser.add_subparsers(dest="assignment_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="the assignments of a term")
    listing.add_argument("--term", default=None, help="default: the current one")
    listing.set_defaults(func=run, action=list_assignments)
    for name, create in (("add", True), ("set", False)):
        edit = sub.add_parser(name, help="create an assignment" if create else
                              "change an assignment (only the options given)")
        edit.add_argument("name")
        for option, (_, keywords) in OPTIONS.items():
            edit.add_argument(option, default=None, **keywords)  # type: ignore[arg-type]
        edit.add_argument("--hidden", action=argparse.BooleanOptionalAction, default=None,
                          help="judge on a secret seed (--no-hidden: the public seeds)")
        edit.add_argument("--closed", action="store_true", help="students may not submit yet")
        edit.set_defaults(func=run, action=add_assignment if create else set_assignment)
    for state in ("open", "close"):
        toggle = sub.add_parser(state, help=f"{state} an assignment for students' uploads")
        toggle.add_argument("name")
        toggle.set_defaults(func=run, action=open_assignment if state == "open"
                            else close_assignment)
    out = sub.add_parser("export", help="write an assignment's configuration (TOML or JSON)")
    out.add_argument("name")
    out.add_argument("-o", "--output", type=Path, default=None, help="default: standard output")
    out.add_argument("--format", choices=("toml", "json"), default=None,
                     help="default: from the file's name, else toml")
    out.set_defaults(func=run, action=export_assignment)
    into = sub.add_parser("import", help="create or change an assignment from a file")
    into.add_argument("file", type=Path)
    into.set_defaults(func=run, action=import_assignment)


def register_terms(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("term", help="archive a term, start the next")
    sub = parser.add_subparsers(dest="assignment_command", metavar="ACTION", required=True)
    sub.add_parser("list", help="every term").set_defaults(func=run, action=list_terms)
    sub.add_parser("archive", help="make the current term read-only").set_defaults(
        func=run, action=archive_term)
    nxt = sub.add_parser("next", help="archive the current term and start NAME with its "
                                      "assignments and no submissions")
    nxt.add_argument("name")
    nxt.set_defaults(func=run, action=next_term)
    renamed = sub.add_parser("rename", help="rename term OLD (the first is called 'current')")
    renamed.add_argument("old")
    renamed.add_argument("new")
    renamed.set_defaults(func=run, action=rename_term)


Action = Callable[[Session, argparse.Namespace], str]


@as_shell
def run(args: argparse.Namespace) -> int:
    """Run the chosen action on the configured database; a refusal is exit status 2."""
    settings = get_settings()
    upgrade(settings.db_url, suite=settings.suite)
    wired_sessions(settings.db_url)
    try:
        with session_scope(settings.db_url) as db:
            print(args.action(db, args))
    except UserError as exc:
        print(f"flashjudge {args.command} {args.assignment_command}: {exc.detail}",
              file=sys.stderr)
        return 2
    return 0


def zone_of(db: Session) -> tzinfo:
    return course_settings.zone(db, get_settings())


def describe(row: assignment_config.Config, term: str, zone: tzinfo = UTC) -> str:
    """One line per assignment; its due time in the course's zone with the offset."""
    state = "open" if row.open else "closed"
    due = moment_text(deadlines.parse_due(row.due_at), zone) if row.due_at else "no deadline"
    hidden = ", hidden tests" if row.hidden_tests else ""
    return (f"{row.name} ({term}, {state}): {row.title or row.name}; suite {row.suite}; "
            f"{', '.join(row.languages) or 'every language'}; {due}; visibility "
            f"{row.visibility}{hidden}")


def list_assignments(db: Session, args: argparse.Namespace) -> str:
    suite = get_settings().suite
    rows = assignments.in_term(db, suite)
    if args.term:
        rows = list(terms.by_name(db, args.term).assignments)
    zone = zone_of(db)
    return "\n".join(describe(assignment_config.of(a), a.term.name, zone) for a in rows) or "none"


def given(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration keys the command line sets."""
    values: dict[str, Any] = {}
    for option, (key, _) in OPTIONS.items():
        value = getattr(args, option.lstrip("-").replace("-", "_"))
        if value is not None:
            values[key] = value
    if isinstance(values.get("languages"), str):
        values["languages"] = tuple(x.strip() for x in str(values["languages"]).split(",")
                                    if x.strip())
    if values.get("due_at") == "none":
        values["due_at"] = None
    if args.hidden is not None:
        values["hidden_tests"] = args.hidden
    return values


def add_assignment(db: Session, args: argparse.Namespace) -> str:
    config = assignment_config.Config(name=args.name, open=not args.closed, **given(args))
    row = assignment_config.apply(db, None, config, get_settings().suite, create=True)
    return describe(assignment_config.of(row), row.term.name, zone_of(db))


def set_assignment(db: Session, args: argparse.Namespace) -> str:
    suite = get_settings().suite
    current = asdict(assignment_config.of(assignments.named(db, args.name, suite)))
    changes = given(args) | ({"open": False} if args.closed else {})
    row = assignment_config.apply(db, None, assignment_config.Config(**current | changes), suite)
    return describe(assignment_config.of(row), row.term.name, zone_of(db))


def toggle(db: Session, name: str, is_open: bool) -> str:
    suite = get_settings().suite
    current = asdict(assignment_config.of(assignments.named(db, name, suite)))
    row = assignment_config.apply(db, None, assignment_config.Config(
        **current | {"open": is_open}), suite)
    return describe(assignment_config.of(row), row.term.name, zone_of(db))


def open_assignment(db: Session, args: argparse.Namespace) -> str:
    return toggle(db, args.name, True)


def close_assignment(db: Session, args: argparse.Namespace) -> str:
    return toggle(db, args.name, False)


def export_assignment(db: Session, args: argparse.Namespace) -> str:
    fmt = args.format or (assignment_config.format_of(args.output.name) if args.output
                          else "toml")
    text = assignment_config.export(assignments.named(db, args.name, get_settings().suite), fmt)
    if args.output is None:
        return text.rstrip("\n")
    args.output.write_text(text)
    return f"{args.name}: configuration written to {args.output}"


def import_assignment(db: Session, args: argparse.Namespace) -> str:
    try:
        text = args.file.read_text()
    except OSError as exc:
        raise UserError(f"cannot read {args.file}: {exc.strerror}", field="file") from exc
    row = assignment_config.import_text(db, None, text, assignment_config.format_of(
        args.file.name), get_settings().suite)
    return describe(assignment_config.of(row), row.term.name, zone_of(db))


def list_terms(db: Session, _args: argparse.Namespace) -> str:
    assignments.in_term(db, get_settings().suite)
    current = assignments.current_term(db)
    return "\n".join(f"{t.name}{' (current)' if current and t.id == current.id else ''}"
                     f"{archived_text(t.archived_at)}" for t in terms.listing(db)) or "none"


def archived_text(moment: datetime | None) -> str:
    return f" archived {moment.isoformat(timespec='minutes')}Z" if moment else ""


def archive_term(db: Session, _args: argparse.Namespace) -> str:
    term = terms.archive(db, None)
    return f"term {term.name} archived: read-only; its boards and grades stay readable"


def rename_term(db: Session, args: argparse.Namespace) -> str:
    term = terms.rename(db, None, args.old, args.new)
    return f"term {args.old} is now {term.name}"


def next_term(db: Session, args: argparse.Namespace) -> str:
    term = terms.start_next(db, None, args.name)
    names = [a.name for a in sorted(term.assignments, key=lambda a: (a.position, a.id))]
    return f"term {term.name} started with {', '.join(names) or 'no assignments'}"
