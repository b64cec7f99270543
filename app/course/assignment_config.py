"""An assignment's configuration as plain data: checked, applied, exported and imported.

The TA page, `/api/admin/assignments` and `flashjudge assignment` all go through `apply`, so a
rule is checked once: a shipped suite, known languages, a late policy and percentages in range,
a visibility rule, a name fit for a URL. Export writes JSON or TOML that `import` reads back
(next year's course, another deployment); the secret seed never leaves: `hidden_tests = true`
makes a fresh one where it is imported. Unknown keys are refused by name, so a typo in a file is
not silently a default.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.errors import UserError
from app.core.nesting import parse_bounded
from app.course import assignments, deadlines, terms
from app.db.models import Assignment, User, utcnow
from flashjudge.contract import LANGUAGES
from testcases.suite import SuiteError, load_suite

VISIBILITY = ("all", "verdicts", "none")  # before the due time; after it a student sees all
MAX_DEPTH = 8  # a configuration is one table of values and short lists; deeper is no config
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
FIELDS: dict[str, tuple[type, ...]] = {  # key -> the types a file may give it
    "name": (str,), "title": (str,), "suite": (str,), "languages": (list,), "open": (bool,),
    "position": (int,), "due_at": (str, type(None)), "late_policy": (str,),
    "penalty_per_day": (int, float), "penalty_cap": (int, float), "gpu_model": (str,),
    "visibility": (str,), "hidden_tests": (bool,), "libraries_allowed": (bool,),
}


@dataclass(frozen=True)
class Config:
    """What a TA sets about an assignment (everything but its submissions and extensions)."""

    name: str  # unique in its term; what --assignment and the API take
    title: str = ""  # for people
    suite: str = "hw4"  # the tests
    languages: tuple[str, ...] = ()  # accepted ((): every language)
    open: bool = True  # students may submit
    position: int = 0  # order on pages
    due_at: str | None = None  # ISO 8601 with its offset; None: no deadline
    late_policy: str = "refuse"  # refuse | penalty
    penalty_per_day: float = 0.0  # percent per started day late
    penalty_cap: float = 100.0  # percent at most
    gpu_model: str = ""  # "": any GPU model judges it
    visibility: str = "all"  # what a student sees before the due time: all | verdicts | none
    hidden_tests: bool = False  # judged on a secret seed instead of the suite's public ones
    libraries_allowed: bool = False  # library kernels may compute the answer (the suite's
    # own-kernels rule lifted for this assignment; a second process on the GPU stays BK)


def parse(data: dict[str, Any], where: str = "configuration") -> Config:
    """A Config from a decoded file or request body; a UserError naming the key otherwise."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a table of keys, got {type(data).__name__}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise UserError(f"{where}: unknown key(s) {', '.join(unknown)}; the keys are "
                        f"{', '.join(FIELDS)}", field=unknown[0])
    for key, value in data.items():
        if not isinstance(value, FIELDS[key]) or (isinstance(value, bool)
                                                   and bool not in FIELDS[key]):
            raise UserError(f"{where}: {key} must be {' or '.join(t.__name__ for t in FIELDS[key])}"
                            f", not {type(value).__name__}", field=key)
    if "name" not in data:
        raise UserError(f"{where}: name is missing", field="name")
    values = dict(data) | {"languages": tuple(data.get("languages", ()))}
    config = Config(**values)
    check(config)
    return config


def check(config: Config) -> None:
    """Every rule of a configuration, each refusal naming its field."""
    if not NAME.match(config.name):
        raise UserError(f"name {config.name!r}: letters, digits, '.', '_' and '-', at most 64, "
                        "starting with a letter or digit", field="name")
    try:
        load_suite(config.suite)
    except SuiteError as exc:
        raise UserError(f"suite: {exc}", field="suite") from exc
    wrong = [x for x in config.languages if x not in LANGUAGES]
    if wrong:
        raise UserError(f"languages: unknown {', '.join(wrong)}; choose from "
                        f"{', '.join(sorted(LANGUAGES))}", field="languages")
    if config.visibility not in VISIBILITY:
        raise UserError(f"visibility must be one of {', '.join(VISIBILITY)}, not "
                        f"{config.visibility!r}", field="visibility")
    deadlines.check_rule(config.late_policy, config.penalty_per_day, config.penalty_cap)
    if config.due_at is not None:
        deadlines.parse_due(config.due_at)


def of(row: Assignment) -> Config:
    """The configuration of an assignment as it stands."""
    due = deadlines.iso(deadlines.aware(row.due_at)) if row.due_at else None
    return Config(name=row.name, title=row.title, suite=row.suite,
                  languages=tuple(row.language_list), open=row.is_open, position=row.position,
                  due_at=due, late_policy=row.late_policy,
                  penalty_per_day=row.penalty_per_day, penalty_cap=row.penalty_cap,
                  gpu_model=row.gpu_model, visibility=row.visibility,
                  hidden_tests=row.secret_seed is not None,
                  libraries_allowed=row.libraries_allowed)


def as_data(config: Config) -> dict[str, Any]:
    """Plain data for JSON or TOML (no due_at key when there is none: TOML has no null)."""
    data = {key: getattr(config, key) for key in FIELDS}
    data["languages"] = list(config.languages)
    return {k: v for k, v in data.items() if v is not None}


def apply(db: Session, actor: User | None, config: Config, default_suite: str,
          create: bool = False) -> Assignment:
    """Create (create=True) or change the current term's assignment `config.name` (audited,
    committed)."""
    check(config)
    rows = assignments.in_term(db, default_suite)
    row = next((a for a in rows if a.name == config.name), None)
    if create and row is not None:
        raise UserError(f"an assignment {config.name!r} exists already in this term",
                        status=409, field="name")
    if row is None and not create:
        raise UserError(f"no assignment {config.name!r}; this term has: "
                        f"{assignments.names(rows)}", status=404, field="name")
    if row is None:
        term = assignments.current_term(db)
        if term is None:
            raise UserError("no current term: start one first", status=409, field="term")
        row = Assignment(term=term, name=config.name)
        db.add(row)
    terms.require_writable(row)
    fill(row, config, actor)
    audit.record(db, actor, "assignment-create" if create else "assignment-set", row.name,
                 **{k: v for k, v in as_data(config).items() if k != "name"})
    db.commit()
    return row


def fill(row: Assignment, config: Config, actor: User | None) -> None:
    """Copy the configuration onto the row; a seed is made when tests become hidden and
    dropped when they stop being hidden."""
    row.title, row.suite, row.languages = config.title, config.suite, ",".join(config.languages)
    row.is_open, row.position, row.gpu_model = config.open, config.position, config.gpu_model
    row.late_policy, row.visibility = config.late_policy, config.visibility
    row.libraries_allowed = config.libraries_allowed
    row.penalty_per_day, row.penalty_cap = config.penalty_per_day, config.penalty_cap
    row.due_at = (deadlines.stored(deadlines.parse_due(config.due_at))
                  if config.due_at else None)
    if config.hidden_tests and row.secret_seed is None:
        row.secret_seed = terms.fresh_seed()
    elif not config.hidden_tests:
        row.secret_seed = None
    row.updated_by, row.updated_at = (actor.id if actor else None), utcnow()


def export(row: Assignment, fmt: str) -> str:
    """The configuration as "json" or "toml" text."""
    data = as_data(of(row))
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt == "toml":
        return "".join(f"{key} = {toml_value(value)}\n" for key, value in data.items())
    raise UserError(f"format must be json or toml, not {fmt!r}", field="format")


def toml_value(value: object) -> str:
    """TOML for the few types a configuration holds (json's strings are TOML's basic strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


def decode(text: str, fmt: str) -> dict[str, Any]:
    """A configuration file's text as data; a UserError saying where it does not parse."""
    parsers: dict[str, Callable[[str], Any]] = {"json": json.loads, "toml": tomllib.loads}
    if fmt not in parsers:
        raise UserError(f"format must be json or toml, not {fmt!r}", field="format")
    try:
        data = parse_bounded(text, parsers[fmt], fmt.upper(), MAX_DEPTH, "file")
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"not valid {fmt.upper()}: {exc}", field="file") from exc
    if not isinstance(data, dict):
        raise UserError(f"{fmt.upper()}: expected a table of keys at the top", field="file")
    return data


def import_text(db: Session, actor: User | None, text: str, fmt: str,
                default_suite: str) -> Assignment:
    """Create the assignment a file describes, or change the one of that name."""
    config = parse(decode(text, fmt), f"{fmt.upper()} file")
    exists = db.scalar(select(Assignment.id).join(Assignment.term).where(
        Assignment.name == config.name, Assignment.term_id == _term_id(db)))
    return apply(db, actor, config, default_suite, create=exists is None)


def _term_id(db: Session) -> int | None:
    term = assignments.current_term(db)
    return term.id if term else None


def format_of(filename: str) -> str:
    """json or toml, from a file's name."""
    return "toml" if filename.lower().endswith(".toml") else "json"

