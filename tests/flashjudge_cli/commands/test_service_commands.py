"""`flashjudge users` and the worker layout of `flashjudge worker` / `serve`."""

from __future__ import annotations

import csv
import signal
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.accounts.users import authenticate
from app.core.config import get_settings
from app.db.models import User
from app.main import create_app
from flashjudge_cli.commands.worker import (
    INSECURE_ENV,
    STOP_GRACE_S,
    coming,
    judge_specs,
    sandbox_refusal,
    stop,
)
from flashjudge_cli.main import main
from worker.gpus import Gpu
from worker.settings import get_worker_settings


@pytest.fixture
def cli_settings(settings, monkeypatch):
    """Point the commands (which read the environment) at the test database."""
    monkeypatch.setenv("FLASHJUDGE_DATA_DIR", str(settings.data_dir))
    if settings.database_url:
        monkeypatch.setenv("FLASHJUDGE_DATABASE_URL", settings.database_url)
    get_settings.cache_clear()
    yield settings
    get_settings.cache_clear()


def test_users_import_and_add(cli_settings, db, tmp_path, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text("username,display name,email,role\nr1,Reader One,r1@x.edu,student\n")
    assert main(["users", "import", str(roster)]) == 0
    assert main(["users", "add", "tb", "--role", "ta", "--password", "a long passphrase"]) == 0
    assert "created 1, updated 0" in capsys.readouterr().err
    db.expire_all()
    assert {u.username: u.role for u in db.scalars(select(User))} == {"r1": "student",
                                                                      "tb": "ta"}
    assert authenticate(db, "tb", "a long passphrase").role == "ta"
    assert db.scalar(select(User.password_hash).where(User.username == "tb")).startswith(
        "$argon2")


def link_in(text: str) -> str:
    return next(w for w in text.split() if "/set-password?token=" in w).strip(",")


def test_a_user_added_without_a_password_gets_a_sign_in_link(cli_settings, capsys, settings):
    assert main(["users", "add", "carol"]) == 0
    out = capsys.readouterr().out
    assert "carol has no password: send them this one-time sign-in link" in out
    link = link_in(out)
    assert link.startswith("http://127.0.0.1:8000/set-password?token=")
    with TestClient(create_app(settings)) as client:
        token = parse_qs(urlsplit(link).query)["token"][0]
        done = client.post("/set-password", data={"token": token, "password": "carols passphrase",
                                                  "confirm": "carols passphrase"},
                           follow_redirects=False)
        assert done.status_code == 303
        assert client.post("/api/auth/token", data={"username": "carol",
                                                    "password": "carols passphrase"}).is_success


def test_import_prints_a_links_csv_and_reset_prints_a_link(cli_settings, tmp_path, capsys,
                                                           monkeypatch):
    monkeypatch.setenv("FLASHJUDGE_PUBLIC_URL", "https://judge.example.edu")
    get_settings.cache_clear()
    roster = tmp_path / "roster.csv"
    roster.write_text("a1,A One,a1@x.edu,student\na2,A Two,a2@x.edu,student\n")
    links = tmp_path / "links.csv"
    assert main(["users", "import", str(roster), "--links", str(links)]) == 0
    rows = list(csv.DictReader(links.open()))
    assert [(r["username"], r["email"]) for r in rows] == [("a1", "a1@x.edu"), ("a2", "a2@x.edu")]
    assert all(r["link"].startswith("https://judge.example.edu/set-password?token=")
               for r in rows)
    assert "2 without a password get a one-time sign-in link" in capsys.readouterr().err
    assert main(["users", "reset", "a1"]) == 0
    assert "/set-password?token=" in capsys.readouterr().out
    assert main(["users", "reset", "nobody"]) == 2


def test_a_short_password_is_refused_and_changes_nothing(cli_settings, db, capsys):
    assert main(["users", "add", "tc", "--password", "s3cret"]) == 2
    assert "at least 10 characters" in capsys.readouterr().err
    assert list(db.scalars(select(User))) == []


def test_a_bad_roster_is_refused_with_the_row(cli_settings, db, tmp_path, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text("ok1,One,o@x.edu,student\nbad name,Two,t@x.edu,student\n")
    assert main(["users", "import", str(roster)]) == 2
    assert "roster row 2: username 'bad name'" in capsys.readouterr().err
    db.expire_all()
    assert list(db.scalars(select(User))) == []


def test_worker_layout_one_process_per_gpu_pinned_by_uuid():
    gpus = [Gpu(index=i, uuid=f"GPU-{i}", name=f"NVIDIA H10{i}", minor=1 - i, pci_bus_id="")
            for i in (0, 1)]
    specs = judge_specs(gpus, None)
    assert [(s.name, s.queues, s.env["CUDA_VISIBLE_DEVICES"]) for s in specs] == [
        ("gpu0", "gpu", "GPU-0"), ("gpu1", "gpu", "GPU-1")]
    assert [c.status("starting").gpu for c in coming(specs)] == ["NVIDIA H100", "NVIDIA H101"]
    cpu = judge_specs([], None)
    assert [(s.name, s.queues) for s in cpu] == [("cpu", "cpu")]
    assert [c.status("starting").gpu for c in coming(cpu)] == ["cpu"]


def test_stop_lets_workers_finish_then_kills_those_still_running_after_the_grace():
    """SIGTERM first (Celery finishes the judging in hand); SIGKILL only once the grace is over."""
    ignores_term = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                    "print('ready', flush=True); time.sleep(60)")
    stubborn = subprocess.Popen([sys.executable, "-c", ignores_term], stdout=subprocess.PIPE)
    polite = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert stubborn.stdout is not None
    assert stubborn.stdout.readline() == b"ready\n"  # its SIGTERM handler is in place
    stop([stubborn, polite], grace_s=0.5)
    assert polite.returncode == -signal.SIGTERM
    assert stubborn.returncode == -signal.SIGKILL
    stubborn.stdout.close()
    assert 60 <= STOP_GRACE_S < 120  # compose's stop_grace_period is 2m (tests/deploy)


@pytest.mark.parametrize("command", [["worker", "--gpus", "none"], ["serve", "--port", "1"]])
def test_judge_workers_refuse_to_start_where_nothing_can_be_sandboxed(command, tmp_path,
                                                                      worker_env_vars, capsys):
    worker_env_vars({"FLASHJUDGE_BWRAP": str(tmp_path / "no-bwrap"),
                     "PATH": str(tmp_path),  # no bwrap on the PATH either
                     "FLASHJUDGE_DATA_DIR": str(tmp_path / "data")})
    assert main(command) == 2
    err = capsys.readouterr().err
    assert "refusing to start judge workers" in err and "bubblewrap not found" in err
    written = sorted(p.name.split(".", 1)[1] for p in (tmp_path / "data").rglob("*.msg"))
    # nothing was started; `worker` only told the control side (for /readyz) that it is starting,
    # then "not starting: <why>" (docs/deployment.md), and `serve` wrote nothing at all
    assert written == (["control.msg"] * 2 if command[0] == "worker" else [])
    assert command[0] == "worker" or not (tmp_path / "data").exists()


def test_insecure_workers_start_and_tell_their_judgings(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLASHJUDGE_BWRAP", str(tmp_path / "no-bwrap"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(INSECURE_ENV, raising=False)
    assert sandbox_refusal(insecure=True) is None
    get_worker_settings.cache_clear()
    assert get_worker_settings().insecure  # the workers it starts mark every result INSECURE
    assert "INSECURE" in capsys.readouterr().out
