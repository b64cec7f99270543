"""`flashjudge deadline`, the one default-suite rule of serve/judge-local/testcase, and the score
judge-local prints for the tests it judged."""

from __future__ import annotations

import getpass
import os
import socket
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy import select

from app.accounts import audit
from app.core.config import Settings, get_settings
from app.course import course_settings
from app.db.models import Assignment, AuditLog
from flashjudge.contract import CompileResult, JudgeResult, TestResult, Verdict
from flashjudge_cli.commands.judge_local import score_line
from flashjudge_cli.commands.machine import default_suite
from flashjudge_cli.commands.submit import show_progress
from flashjudge_cli.main import main
from tests.app.utils.factories import make_user
from worker.gpus import Gpu


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


@pytest.fixture
def fake_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An nvidia-smi on the PATH that lists two GPUs (and no FLASHJUDGE_SUITE set)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text('#!/bin/sh\ncase "$*" in\n  *index,uuid*) echo "0, GPU-0, Fake, 0:1"; '
                   'echo "1, GPU-1, Fake, 0:2";;\n  *) echo "Fake GPU";;\nesac\n')
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.delenv("FLASHJUDGE_SUITE", raising=False)
    return bin_dir


def test_deadline_set_show_extend_and_clear(cli_settings, db, capsys):
    make_user(db, "alice")
    assert main(["deadline", "set", "hw4", "2026-12-01T23:59+08:00", "--late", "penalty",
                 "--per-day", "10", "--cap", "50"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("hw4: due 2026-12-01 23:59 UTC+08:00 (")  # the course's zone
    assert "late uploads lose 10% per started day, at most 50%" in out
    assert main(["deadline", "extend", "hw4", "alice", "2026-12-03T12:00Z"]) == 0
    assert "extension: alice until 2026-12-03 20:00 UTC+08:00" in capsys.readouterr().out
    assert main(["deadline", "unextend", "hw4", "alice"]) == 0
    assert main(["deadline", "clear", "hw4"]) == 0
    assert "hw4: deadline removed" in capsys.readouterr().out
    db.expire_all()
    assert [a for a in db.scalars(select(AuditLog.action).order_by(AuditLog.id))] == [
        "deadline-set", "extension-grant", "extension-revoke", "deadline-clear"]


def test_deadline_refusals_name_the_field_and_change_nothing(cli_settings, db, capsys):
    assert main(["deadline", "set", "hw4", "2026-12-01T23:59"]) == 2
    assert "due: '2026-12-01T23:59' has no UTC offset" in capsys.readouterr().err
    assert main(["deadline", "set", "hw9", "2026-12-01T23:59Z"]) == 2
    assert "no assignment 'hw9'; this term has: hw4" in capsys.readouterr().err
    db.expire_all()
    assert list(db.scalars(select(Assignment.due_at))) == [None]


def test_the_default_suite_follows_the_machine_like_serve(monkeypatch, fake_gpus):
    assert default_suite() == "hw4"
    assert default_suite([]) == "hw4-mini"
    monkeypatch.setenv("FLASHJUDGE_SUITE", "hw4-mini")
    assert default_suite([Gpu(0, "GPU-0", "NVIDIA H100", 0, "")]) == "hw4-mini"


def test_testcase_uses_the_suite_the_server_would_judge(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi: the CPU track
    monkeypatch.delenv("FLASHJUDGE_SUITE", raising=False)
    assert main(["testcase", "list"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the table title wraps
    assert "suite hw4-mini" in out and "10 points per passed test (at most 100)" in out
    assert main(["testcase", "gen", "t07", "-o", str(tmp_path / "t07.in")]) == 0
    assert (tmp_path / "t07.in").stat().st_size == 12 + 12 * 4 * 33 * 64  # hw4-mini t07


def test_testcase_defaults_to_hw4_with_a_gpu(fake_gpus, capsys):
    assert main(["testcase", "list"]) == 0
    assert "suite hw4:" in capsys.readouterr().out


def test_judge_local_prints_the_score_of_what_it_judged():
    tests = [TestResult(id=i, verdict=Verdict.CE, seconds=0.0) for i in ("t06", "t07")]
    result = JudgeResult(CompileResult(ok=False), tests, score=0, passed=0, language="c-program",
                         suite="hw4", max_score=6)
    console = Console(record=True, width=120)
    console.print(score_line(result))
    assert console.export_text().startswith("Score: 0/6  passed 0/2 (t06, t07 only)")


def test_submit_says_what_a_queued_submission_waits_for(capsys):
    state = {"status": "queued", "queue_position": 0, "tests": [],
             "waiting": "waiting: no GPU worker is connected; it is judged as soon as one is"}
    show_progress(state, set())
    out = capsys.readouterr().out
    assert "waiting: no GPU worker is connected" in out and "position" not in out


def test_the_audit_log_names_the_shell_user_of_a_command(cli_settings, client, db, ta, capsys):
    """A deadline set from the server's shell read "-" as its who, like a refused sign-in."""
    assert main(["deadline", "set", "hw4", "2026-12-01T23:59+08:00"]) == 0
    entries = client.get("/api/admin/audit", headers=ta.headers).json()["entries"]
    assert entries[0]["action"] == "deadline-set"
    assert entries[0]["actor"] == f"shell {getpass.getuser()}@{socket.gethostname()}"
    assert audit.SHELL.label == ""  # later rows of this process are no shell's


def test_the_commands_show_the_zone_a_ta_saved_on_the_settings_page(cli_settings, db, capsys):
    """The environment's zone is only the first value: the page's is the one in use."""
    assert main(["deadline", "set", "hw4", "2026-12-01T23:59+08:00"]) == 0
    course_settings.save(db, None, Settings(data_dir=cli_settings.data_dir,
                                            database_url=cli_settings.database_url),
                         course_settings.Draft("Europe/Berlin", 30, "refuse", 0, 100))
    capsys.readouterr()
    assert main(["deadline", "show", "hw4"]) == 0
    assert capsys.readouterr().out.startswith("hw4: due 2026-12-01 16:59 UTC+01:00 (")
