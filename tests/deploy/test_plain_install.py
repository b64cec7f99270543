"""A plain install (`pip install flashjudge`, no extras) runs the Redis workers: everything the
code imports at run time is a declared dependency, not something the dev extra happens to bring
along. kombu's Redis transport imports `packaging` and declares it nowhere, so a venv without
the dev tools had both workers die at start with "No module named 'packaging'"."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from tests.app.utils.processes import stop

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("flashjudge", "flashjudge_cli", "app", "worker", "kernels", "testcases")


def plain_venv(tmp_path: Path) -> Path:
    """A fresh venv with a copy of this checkout installed without extras; its python."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for package in PACKAGES:
        shutil.copytree(REPO / package, source / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                                "-q", str(source)], capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return python


def ready(proc: subprocess.Popen, log: Path, seconds: float) -> str:
    """The worker's log once it says it is ready, or once it died or the time ran out."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and proc.poll() is None:
        text = log.read_text(errors="replace")
        if " ready." in text:
            return text
        time.sleep(0.5)
    return log.read_text(errors="replace")


@pytest.mark.slow
def test_a_plain_install_starts_a_redis_worker(tmp_path: Path, redis_url: str) -> None:
    python = plain_venv(tmp_path)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FLASHJUDGE_", "PYTHON", "VIRTUAL_ENV"))}
    env.update({"FLASHJUDGE_BROKER_URL": redis_url, "FLASHJUDGE_DATA_DIR": str(tmp_path / "data"),
                "FLASHJUDGE_DATABASE_URL": f"sqlite:///{tmp_path / 'data' / 'fj.db'}",
                "FLASHJUDGE_ENVIRONMENT": "test", "FLASHJUDGE_SECRET_KEY": "plain-install-test"})
    log = tmp_path / "control.log"
    argv = [str(python), "-m", "celery", "-A", "app.control.entry", "worker", "-Q", "control",
            "-P", "solo", "-n", f"plain-{os.getpid()}@test", "--without-gossip",
            "--without-mingle", "--without-heartbeat", "--loglevel", "INFO"]
    with log.open("ab") as out:  # from the temp folder: nothing of the checkout on the path
        proc = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        said = ready(proc, log, 90)
    finally:
        stop(proc)
    assert " ready." in said, said[-3000:]
    assert "No module named" not in said


def test_the_images_pin_every_declared_dependency() -> None:
    """docker/constraints.txt pins what the images install: each runtime dependency is there,
    `packaging` (kombu's Redis transport) included."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pinned = {line.split("==")[0].strip().lower()
              for line in (REPO / "docker" / "constraints.txt").read_text().splitlines()
              if "==" in line and not line.startswith("#")}
    declared = {dep.split(">")[0].split("=")[0].split("[")[0].split("<")[0].strip().lower()
                for dep in project["dependencies"]}
    assert "packaging" in declared
    assert declared <= pinned, declared - pinned
