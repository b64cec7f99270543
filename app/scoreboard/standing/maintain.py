"""Writing the standing: the affected students' rows rewritten where they differ, the version
bumped and the change noted, all in the caller's transaction; or everything rebuilt.

Concurrency: every writer first locks the one `board_state` row (SELECT ... FOR UPDATE; SQLite
has one writer at a time anyway), and only then reads the submissions it ranks. Two results of
one student recorded at once cannot both rank without the other: the second waits for the first
to commit, and under READ COMMITTED its reads after the lock see the first one's rows. The lock
is held from the commit's flush to the commit, a few milliseconds.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from sqlalchemy import delete, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.changefeed.changes import SCOREBOARD, note_change
from app.db.models import BoardState, Standing, Submission
from app.db.models.standing import FROZEN, LIVE
from app.scoreboard.standing.compute import Key, Line, chunks, wanted
from app.scoreboard.standing.moves import MOVES
from app.scoreboard.standing.rules import Boards, boards_now, judged_models
from flashjudge.contract import Status

STATE_ID = 1
STANDINGS = Standing.metadata.tables[Standing.__tablename__]  # a Table; __table__ is a FromClause
LINE_FIELDS = tuple(Line.__dataclass_fields__)


@dataclass
class Pending:
    """What a transaction changed that can move board rows (collected by
    app/scoreboard/standing/hooks.py)."""

    users: set[int] = field(default_factory=set)  # students whose rows may have moved
    submissions: set[int] = field(default_factory=set)  # whose tests changed (-> their user)
    freeze: bool = False  # the board was frozen or unfrozen
    models: bool = False  # the list of judged GPU models (the boards' tabs) may have changed
    boards: bool = False  # assignments were made, changed or removed: every board again

    def __bool__(self) -> bool:
        return bool(self.users or self.submissions or self.freeze or self.models
                    or self.boards)


@dataclass(frozen=True)
class State:
    """The board_state row."""

    version: int  # bumped by every change to a board
    built: bool  # the standing was computed from the submissions (else: rebuild first)
    models: list[str]  # judged GPU models, the most used first


def locked_state(db: Session) -> State:
    """The board's state, its row locked until the transaction ends (created unbuilt when
    missing: a fresh database, or one whose tables were emptied)."""
    query = select(BoardState.version, BoardState.built, BoardState.models).where(
        BoardState.id == STATE_ID).with_for_update()
    row = db.execute(query).first()
    if row is None:
        dialect = postgresql if db.get_bind().dialect.name == "postgresql" else sqlite
        db.execute(dialect.insert(BoardState).values(id=STATE_ID, version=0, built=False,
                                                     models=[]).on_conflict_do_nothing())
        row = db.execute(query).one()
    return State(row.version, row.built, list(row.models or []))


def bump(db: Session, state: State, models: list[str]) -> int:
    """The next version (built, with these models), and a note on the change feed (the
    pages' push)."""
    db.execute(update(BoardState).where(BoardState.id == STATE_ID)
               .values(version=state.version + 1, built=True, models=models))
    note_change(db, SCOREBOARD)
    MOVES.heard_after_commit(db)
    return state.version + 1


def stored(db: Session, user_ids: Collection[int] | None = None,
           cuts: Collection[str] = (LIVE, FROZEN)) -> dict[Key, tuple[int, Line]]:
    """Key -> (row id, what it says) of the stored rows of these students (None: all)."""
    have: dict[Key, tuple[int, Line]] = {}
    query = select(STANDINGS).where(STANDINGS.c.cut.in_(cuts))
    for batch in [None] if user_ids is None else list(chunks(user_ids)):
        chosen = query if batch is None else query.where(STANDINGS.c.user_id.in_(batch))
        for r in db.execute(chosen):
            line = Line(*(r._mapping[name] for name in LINE_FIELDS))
            have[(r.assignment_id, r.cut, r.gpu_model, r.user_id)] = (r.id, line)
    return have


def sync(db: Session, rows: dict[Key, Line], user_ids: Collection[int] | None,
         cuts: Collection[str], stamp: int) -> bool:
    """Make the stored rows of these students (None: all) in these cuts equal `rows`, rows
    written stamped with `stamp` (the version this transaction makes); whether anything had
    to change."""
    have = stored(db, user_ids, cuts)
    gone = [have[key][0] for key in have.keys() - rows.keys()]
    new = [as_row(k, rows[k], stamp) for k in rows.keys() - have.keys()]
    moved = [(have[k][0], rows[k]) for k in rows.keys() & have.keys() if have[k][1] != rows[k]]
    for batch in chunks(gone):
        db.execute(delete(STANDINGS).where(STANDINGS.c.id.in_(batch)))
    if new:
        db.execute(insert(STANDINGS), new)
    for row_id, line in moved:
        db.execute(update(STANDINGS).where(STANDINGS.c.id == row_id)
                   .values(stamp=stamp, **line.values()))
    return bool(gone or new or moved)


def as_row(key: Key, line: Line, stamp: int) -> dict[str, object]:
    """The column values of a new standings row."""
    return {"assignment_id": key[0], "cut": key[1], "gpu_model": key[2], "user_id": key[3],
            "stamp": stamp, **line.values()}


def cuts_for(boards: Boards) -> tuple[str, ...]:
    return (LIVE, FROZEN) if boards.freezes else (LIVE,)


def refresh(db: Session, boards: Boards, pending: Pending, stamp: int) -> bool:
    """Rewrite what `pending` names; whether any row changed."""
    changed = False
    if pending.freeze:  # the frozen cuts as of the (new) freezes, or none while live
        frozen = wanted(db, boards, None, (FROZEN,)) if boards.freezes else {}
        changed |= sync(db, frozen, None, (FROZEN,), stamp)
    if pending.users:
        cuts = cuts_for(boards)
        rows = wanted(db, boards, pending.users, cuts)
        changed |= sync(db, rows, pending.users, cuts, stamp)
    return changed


def apply(db: Session, pending: Pending) -> int | None:
    """Bring the standing up to date with `pending` in the caller's transaction; the new
    version, or None when no board changed."""
    state = locked_state(db)
    if not state.built or pending.boards:
        rebuild_locked(db, state.version + 1)
        return bump(db, state, judged_models(db))
    pending.users |= users_of(db, pending.submissions)
    models = judged_models(db) if pending.models else state.models
    if refresh(db, boards_now(db), pending, state.version + 1) or models != state.models:
        return bump(db, state, models)
    return None


def users_of(db: Session, submission_ids: Collection[int]) -> set[int]:
    """The students whose submissions these are (only judged ones: tests of a submission still
    running show on no board, and progress events change them all the time)."""
    found: set[int] = set()
    for batch in chunks(submission_ids):
        found |= set(db.scalars(select(Submission.user_id).where(
            Submission.id.in_(batch), Submission.status == Status.DONE)))
    return found


def rebuild_locked(db: Session, stamp: int) -> None:
    """Every row computed again from the submissions (the state row is locked), stamped with
    the version the caller is about to make."""
    boards = boards_now(db)
    db.execute(delete(STANDINGS))
    rows = wanted(db, boards, None, cuts_for(boards))
    if rows:
        db.execute(insert(STANDINGS), [as_row(k, line, stamp) for k, line in rows.items()])


def rebuild(db: Session) -> int:
    """A full rebuild in the caller's transaction (`flashjudge scoreboard rebuild`, and the
    first use of a database migrated from before the standing); the new version."""
    state = locked_state(db)
    rebuild_locked(db, state.version + 1)
    return bump(db, state, judged_models(db))


def differences(db: Session) -> set[Key]:
    """The rows where the standing and a full recomputation disagree (none, always: a test and
    `flashjudge scoreboard check` hold it to that)."""
    boards = boards_now(db)
    want = wanted(db, boards, None, cuts_for(boards))
    have = {key: line for key, (_, line) in stored(db).items()}
    return {key for key in want.keys() | have.keys() if want.get(key) != have.get(key)}


def row_count(db: Session) -> int:
    return len(stored(db))


def current_state(db: Session) -> State:
    """The board's state for a reader, rebuilding the standing first (committed) when it was
    never built or its tables were emptied: a reader never serves an empty board by mistake."""
    row = db.execute(select(BoardState.version, BoardState.built, BoardState.models)
                     .where(BoardState.id == STATE_ID)).first()
    if row is not None and row.built:
        return State(row.version, True, list(row.models or []))
    state = locked_state(db)
    if not state.built:
        rebuild_locked(db, state.version + 1)
        models = judged_models(db)
        state = State(bump(db, state, models), True, models)
    db.commit()
    return state


def current_version(db: Session) -> int:
    return current_state(db).version
