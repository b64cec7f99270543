"""The change feed: one row per thing that changed, written in the same transaction as the change.

Pages watch submissions and the scoreboard live. Rather than each open stream asking the database
(one connection per watcher), every API process runs one poller that reads new rows of this table
and fans them out to its streams (app/live/). A topic names what changed: "submission:42",
"scoreboard". Rows are pruned after a while; a stream that reconnects reads the current state
anyway.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, utcnow


class Change(Base):
    """Something watchers care about changed, committed with the change itself."""

    __tablename__ = "changes"
    id: Mapped[int] = mapped_column(primary_key=True)
    topic: Mapped[str] = mapped_column(String(64))  # "submission:ID" | "scoreboard"
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, index=True)
