"""Every command the containers run exists in this project and accepts its arguments.

A renamed subcommand, option or app factory would otherwise surface only when a TA's cluster
fails to start. Commands of third-party images (redis-server, pg_isready) are theirs to keep.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from flashjudge_cli.commands.worker import STOP_GRACE_S
from flashjudge_cli.main import COMMANDS, build_parser

from . import composefile, dockerfile

REPO = composefile.REPO
NODE_ENV = {**composefile.read_env_file(REPO / ".env.example"), "REDIS_HOST": "10.0.0.1"}
THIRD_PARTY = {"redis-server", "redis-cli", "pg_isready"}
SCRIPTS = {  # name in the image -> file in the repository
    "flashjudge-healthcheck": REPO / "docker" / "healthcheck.py",
    "flashjudge-worker-entrypoint": REPO / "docker" / "worker-entrypoint.sh",
}


def compose_commands() -> list[tuple[str, list[str]]]:
    found: list[tuple[str, list[str]]] = []
    for name, env in (("docker-compose.yml", None), ("docker-compose.node.yml", NODE_ENV)):
        for service, spec in composefile.load(name, env)["services"].items():
            if "command" in spec:
                found.append((f"{name}:{service}", spec["command"]))
            test = spec.get("healthcheck", {}).get("test", [])
            if test and test[0] == "CMD":
                found.append((f"{name}:{service}:healthcheck", test[1:]))
    return found


def dockerfile_commands() -> list[tuple[str, list[str]]]:
    found: list[tuple[str, list[str]]] = []
    for stage in dockerfile.parse(REPO / "Dockerfile").values():
        for keyword in ("CMD", "ENTRYPOINT", "HEALTHCHECK"):
            value = stage.last(keyword)
            if value:
                found.append((f"Dockerfile:{stage.name}:{keyword}", dockerfile.exec_form(value)))
    return found


ALL_COMMANDS = compose_commands() + dockerfile_commands()


def resolve(target: str) -> Any:
    """`package.module:attribute` as uvicorn and celery resolve it."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def option_value(argv: list[str], *names: str) -> str:
    for i, arg in enumerate(argv):
        if arg in names:
            return argv[i + 1]
        for name in names:
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    raise AssertionError(f"{argv}: no {names[0]}")


def check_flashjudge(argv: list[str]) -> None:
    assert argv[1] in COMMANDS, f"`flashjudge {argv[1]}` is not a subcommand"
    args = build_parser(argv[1:]).parse_args(argv[1:])  # SystemExit(2) on a bad option
    assert callable(args.func)


def check_uvicorn(argv: list[str]) -> None:
    target = next(a for a in argv[1:] if not a.startswith("-"))
    app = resolve(target)
    assert callable(app)
    assert ("--factory" in argv) == (not hasattr(app, "router")), "factory flag matches target"
    if "--http" in argv and ":" in option_value(argv, "--http"):  # a protocol class of ours
        assert isinstance(resolve(option_value(argv, "--http")), type)


def check_celery(argv: list[str]) -> None:
    assert isinstance(resolve(option_value(argv, "--app", "-A")), Celery)


def check_script(argv: list[str]) -> None:
    script = SCRIPTS[argv[0]]
    assert script.is_file()
    if script.suffix == ".py":  # usage errors exit 2; a real check exits 0 or 1
        run = subprocess.run([sys.executable, str(script), *argv[1:]], capture_output=True,
                             text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
        assert run.returncode in (0, 1), run.stdout + run.stderr


@pytest.mark.parametrize("where,argv", ALL_COMMANDS, ids=[w for w, _ in ALL_COMMANDS])
def test_container_commands_exist_in_the_project(where: str, argv: list[str]) -> None:
    program = Path(argv[0]).name
    if program in THIRD_PARTY:
        return
    checks = {"flashjudge": check_flashjudge, "uvicorn": check_uvicorn, "celery": check_celery}
    if program in checks:
        checks[program](argv)
    elif program in SCRIPTS:
        check_script(argv)
    elif program == "python":
        assert argv[1] == "-c"
        compile(argv[2], where, "exec")
    else:
        pytest.fail(f"{where}: unknown program {program!r}")


def test_the_migrate_service_brings_a_database_to_head(tmp_path: Path) -> None:
    """Run the compose migrate command for real (SQLite stands in for PostgreSQL)."""
    command = composefile.load()["services"]["migrate"]["command"]
    database = tmp_path / "fresh.db"
    env = {"PATH": "/usr/bin:/bin", "FLASHJUDGE_DATABASE_URL": f"sqlite:///{database}",
           "FLASHJUDGE_DATA_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, *command[1:]], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    from alembic.script import ScriptDirectory

    from app.db.migrate import alembic_config

    heads = set(ScriptDirectory.from_config(alembic_config(f"sqlite:///{database}")).get_heads())
    with sqlite3.connect(database) as db:
        assert {row[0] for row in db.execute("SELECT version_num FROM alembic_version")} == heads


def test_scripts_the_images_run_are_copied_into_them() -> None:
    copies = [args for stage in dockerfile.parse(REPO / "Dockerfile").values()
              for args in stage.all("COPY")]
    for name, script in SCRIPTS.items():
        source = script.relative_to(REPO).as_posix()
        assert any(source in c and c.endswith(f"/usr/local/bin/{name}") for c in copies), name
        assert script.stat().st_mode & 0o111, f"{source} is not executable"


def grace_seconds(period: str) -> float:
    """Compose's duration ("2m", "90s", "1m30s") in seconds."""
    units = {"h": 3600, "m": 60, "s": 1}
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", period)
    assert parts and "".join(n + u for n, u in parts) == period, f"unread duration {period!r}"
    return sum(float(n) * units[u] for n, u in parts)


@pytest.mark.parametrize("name", [label for label, argv in ALL_COMMANDS
                                  if label.startswith("docker-compose")
                                  and argv[:2] == ["flashjudge", "worker"]
                                  and "--control" not in argv])  # control tasks take ms
def test_a_stopped_worker_finishes_its_judging_before_compose_kills_it(name: str) -> None:
    """`flashjudge worker` gives its judge workers STOP_GRACE_S to finish the judging in hand;
    compose must wait longer than that before its SIGKILL, or the judging is lost mid-run."""
    file, service = name.split(":")[:2]
    env = None if file == "docker-compose.yml" else NODE_ENV
    spec = composefile.load(file, env)["services"][service]
    assert grace_seconds(spec.get("stop_grace_period", "10s")) > STOP_GRACE_S + 5
