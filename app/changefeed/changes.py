"""Writing the change feed (app/db/models/live.py): what every writer calls, in its transaction.

Noting a change inside the transaction that makes it means a watcher can never see the note
without the change (or the change without a note): both commit or neither does.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.db.models import Change

SCOREBOARD = "scoreboard"  # any change that can move a row of any board
SUBMISSION = "submission:"  # the prefix of one submission's topic
SESSIONS = "sessions"  # browser sessions ended or a user's role changed: forget remembered ones


def submission_topic(submission_id: int) -> str:
    """The topic of one submission's page and event stream."""
    return f"{SUBMISSION}{submission_id}"


def topic_submission(topic: str) -> int | None:
    """The submission id a topic names, or None for any other topic."""
    rest = topic.removeprefix(SUBMISSION)
    return int(rest) if rest != topic and rest.isdigit() else None


def note_change(db: Session, topic: str) -> None:
    """Record that `topic` changed; committed (or rolled back) with the caller's transaction."""
    db.add(Change(topic=topic))
