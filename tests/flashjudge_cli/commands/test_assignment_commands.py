"""`flashjudge assignment` and `flashjudge term`: a TA sets up three boards from a
shell, exports one to a file and imports it back, archives the term and starts the next; a
refusal says what to fix and exits 2."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.core.config import get_settings
from app.db.models import Assignment, AuditLog
from flashjudge_cli.commands.serve import first_assignment
from flashjudge_cli.main import main


@pytest.fixture
def cli_settings(settings, monkeypatch):
    """Point the commands (which read the environment) at the test database."""
    monkeypatch.setenv("FLASHJUDGE_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("FLASHJUDGE_COURSE_TIMEZONE", "Asia/Taipei")  # times print in it
    if settings.database_url:
        monkeypatch.setenv("FLASHJUDGE_DATABASE_URL", settings.database_url)
    get_settings.cache_clear()
    yield settings
    get_settings.cache_clear()


def test_three_boards_from_a_shell(cli_settings, db, capsys, tmp_path):
    assert main(["assignment", "add", "challenge", "--suite", "hw4", "--title",
                 "Kernel challenge", "--languages", "cuda-kernel", "--visibility", "none",
                 "--hidden", "--due", "2026-12-10T23:59+08:00"]) == 0
    assert main(["assignment", "add", "practice", "--suite", "hw4-mini", "--closed"]) == 0
    capsys.readouterr()
    assert main(["assignment", "list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed == [
        "hw4 (current, open): hw4; suite hw4; every language; no deadline; visibility all",
        "challenge (current, open): Kernel challenge; suite hw4; cuda-kernel; "
        "2026-12-10 23:59 UTC+08:00; visibility none, hidden tests",
        "practice (current, closed): practice; suite hw4-mini; every language; no deadline; "
        "visibility all"]
    assert main(["assignment", "open", "practice"]) == 0
    assert "practice (current, open)" in capsys.readouterr().out
    out = tmp_path / "challenge.toml"
    assert main(["assignment", "export", "challenge", "-o", str(out)]) == 0
    assert "hidden_tests = true" in out.read_text() and "seed" not in out.read_text()
    out.write_text(out.read_text().replace("Kernel challenge", "The kernel challenge"))
    assert main(["assignment", "import", str(out)]) == 0
    db.expire_all()
    assert db.scalar(select(Assignment.title).where(Assignment.name == "challenge")) == (
        "The kernel challenge")
    assert "assignment-create" in set(db.scalars(select(AuditLog.action)))


def test_refusals_say_what_to_fix(cli_settings, capsys, tmp_path):
    assert main(["assignment", "add", "x", "--suite", "hw9"]) == 2
    assert "flashjudge assignment add: suite: unknown suite 'hw9'" in capsys.readouterr().err
    assert main(["assignment", "set", "nope", "--title", "t"]) == 2
    assert "no assignment 'nope'; this term has: hw4" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "y", "hidden": true}')
    assert main(["assignment", "import", str(bad)]) == 2
    assert "unknown key(s) hidden" in capsys.readouterr().err


def test_a_term_is_archived_and_the_next_one_starts(cli_settings, db, capsys):
    assert main(["assignment", "list"]) == 0  # the first board (hw4) made first, whatever ran
    assert main(["assignment", "add", "challenge", "--hidden"]) == 0
    assert main(["term", "next", "2027-spring"]) == 0
    assert "term 2027-spring started with hw4, challenge" in capsys.readouterr().out
    assert main(["term", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "2027-spring (current)" and lines[1].startswith("current archived ")
    assert main(["term", "archive"]) == 0
    assert main(["assignment", "set", "hw4", "--title", "x"]) == 2
    assert "this term has: none" in capsys.readouterr().err


def test_serve_on_the_cpu_track_names_the_first_board_after_the_suite_it_judges(
        cli_settings, capsys, monkeypatch):
    """`make run` without a GPU judges hw4-mini; a TA's `assignment list` from another shell
    (FLASHJUDGE_SUITE unset: hw4) must show that board, not make an hw4 one."""
    monkeypatch.setenv("FLASHJUDGE_SUITE", "hw4-mini")
    get_settings.cache_clear()
    first_assignment(get_settings())
    monkeypatch.delenv("FLASHJUDGE_SUITE")
    get_settings.cache_clear()
    assert main(["assignment", "list"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "hw4-mini (current, open): hw4-mini; suite hw4-mini; every language; no deadline; "
        "visibility all"]


def test_a_term_is_renamed_the_first_one_included(cli_settings, db, capsys):
    assert main(["assignment", "list"]) == 0  # the first term, made as "current"
    assert main(["term", "rename", "current", "2026-fall"]) == 0
    assert "term current is now 2026-fall" in capsys.readouterr().out
    assert main(["term", "rename", "2026-fall", "a/b"]) == 2
    assert "term name 'a/b'" in capsys.readouterr().err
    assert main(["term", "list"]) == 0
    assert capsys.readouterr().out.splitlines() == ["2026-fall (current)"]
