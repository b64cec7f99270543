"""A console command that writes runs in its own process: it installs the session listeners
itself (app/wiring.py), so what it changes moves the scoreboard and the change feed as the
service's writes do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import select

from app.db.models import Change, Standing
from app.submissions import recording
from tests.app.utils.factories import judged_result, make_submission

REPO = Path(__file__).resolve().parents[3]


def run_cli(settings, *args: str) -> subprocess.CompletedProcess[str]:
    """`flashjudge ARGS` in a fresh interpreter pointed at the test database."""
    env = {**os.environ, "FLASHJUDGE_DATA_DIR": str(settings.data_dir)}
    if settings.database_url:
        env["FLASHJUDGE_DATABASE_URL"] = settings.database_url
    code = "import sys; from flashjudge_cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_roster_import_from_the_shell_renames_the_student_on_the_board(settings, db, student,
                                                                         tmp_path):
    sub = make_submission(db, student)
    assert recording.record_result(db, settings, sub.id, 1, judged_result(9, 0.5))
    before = db.scalar(select(Change.id).order_by(Change.id.desc()).limit(1))
    roster = tmp_path / "roster.csv"
    roster.write_text("username,display name,email,role\n"
                      "alice,Alice Renamed,alice@example.edu,student\n")
    done = run_cli(settings, "users", "import", str(roster))
    assert done.returncode == 0, done.stderr
    db.expire_all()
    names = set(db.scalars(select(Standing.display_name).where(Standing.user_id == student.id)))
    assert names == {"Alice Renamed"}
    assert "scoreboard" in db.scalars(select(Change.topic).where(Change.id > before)).all()
