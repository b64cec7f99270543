"""`flashjudge scoreboard check | rebuild`: the standing audited and repaired after SQL that went
around the service (a raw connection: no session hooks see it)."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from app.core.config import get_settings
from app.db.models import Standing
from app.db.session import get_engine
from app.scoreboard.standing import maintain
from app.submissions import recording
from flashjudge_cli.main import main
from tests.app.utils.factories import judged_result, make_submission


@pytest.fixture
def cli_settings(settings, monkeypatch):
    """The commands read the environment: point it at the test database."""
    monkeypatch.setenv("FLASHJUDGE_DATA_DIR", str(settings.data_dir))
    if settings.database_url:
        monkeypatch.setenv("FLASHJUDGE_DATABASE_URL", settings.database_url)
    get_settings.cache_clear()
    yield settings
    get_settings.cache_clear()


def test_check_finds_a_tampered_row_and_rebuild_repairs_it(cli_settings, db, student, capsys):
    sub = make_submission(db, student)
    recording.record_result(db, cli_settings, sub.id, 1, judged_result(9, 0.5))
    assert main(["scoreboard", "check"]) == 0
    assert "matches the submissions" in capsys.readouterr().out
    with get_engine(cli_settings.db_url).begin() as conn:
        conn.execute(update(Standing).values(passed=1))
    version = maintain.current_version(db)
    db.rollback()
    assert main(["scoreboard", "check"]) == 1
    assert "differ from the submissions" in capsys.readouterr().out
    assert main(["scoreboard", "rebuild"]) == 0
    assert "rebuilt from the submissions" in capsys.readouterr().out
    assert maintain.differences(db) == set()
    assert maintain.current_version(db) == version + 1  # pages are told to refetch
