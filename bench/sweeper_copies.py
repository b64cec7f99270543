"""Broker messages per queued submission when the queued timeout is short (once 1,001
messages for at most 82 queued submissions). Queues `--submissions` of them, then runs the
sweeper `--passes` times with every send aged past the timeout, and counts the messages waiting
on `cpu` (the embedded broker's files; the Redis broker behaves the same: tests/app/upkeep/
test_sweeper.py counts with LLEN).

Runs the checkout's code in process (SQLite and the embedded broker in a temp dir), so
PYTHONPATH=/path/to/other compares versions.

    PYTHONPATH=. .venv/bin/python bench/sweeper_copies.py [--submissions 10] [--passes 20]
"""

from __future__ import annotations

import argparse
import tempfile
from datetime import timedelta
from pathlib import Path

from rich.console import Console
from rich.table import Table
from sqlalchemy import update

from app.accounts import users
from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.models import Submission, SubmissionFile, utcnow
from app.db.session import session_scope
from app.upkeep.sweeper import sweep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--submissions", type=int, default=10)
    parser.add_argument("--passes", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(environment="test", secret_key="bench-secret", data_dir=Path(data),
                            sweep_interval_s=0, suite="hw4-mini", queued_timeout_s=1.0)
        upgrade(settings.db_url)
        long_ago = utcnow() - timedelta(minutes=5)
        with session_scope(settings.db_url) as db:
            user = users.add_user(db, "bench", "student", None)
            for _ in range(args.submissions):  # stored while the broker was down: unsent
                db.add(Submission(user_id=user.id, language="c-program", suite="hw4-mini",
                                  status="queued", attempt=1, compile_log="", error="",
                                  created_at=long_ago, files=[SubmissionFile(
                                      name="hw4.c", content=b"int main(void){return 0;}\n")]))
        for _ in range(args.passes + 1):
            with session_scope(settings.db_url) as db:
                sweep(db, settings)
                db.execute(update(Submission).values(sent_at=long_ago))
        messages = len(list((Path(data) / "broker" / "queue").glob("*.cpu.msg")))
    table = Table(title=f"queued timeout 1 s, {args.passes} sweeper passes")
    for column in ("queued submissions", "messages on cpu"):
        table.add_column(column)
    table.add_row(str(args.submissions), str(messages))
    Console().print(table)


if __name__ == "__main__":
    main()
