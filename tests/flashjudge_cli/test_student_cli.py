"""The students' command line alone (student-cli/): installed by pip into a fresh virtualenv it
brings `flashjudge submit` and its two libraries, none of the server's, and submits to a real
server. A student was never told how to get `flashjudge` onto a laptop."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from app.db.models import Submission
from tests.app.utils.processes import REPO
from tests.app.utils.served_site import Site, served

pytestmark = pytest.mark.slow
SERVER_ONLY = ("fastapi", "celery", "sqlalchemy", "numpy", "uvicorn", "alembic", "redis")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv with the CLI installed from the repository as a student would."""
    venv = tmp_path_factory.mktemp("laptop") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    installed = subprocess.run([str(venv / "bin" / "pip"), "install", "-q",
                                str(REPO / "student-cli")], capture_output=True, text=True)
    if installed.returncode and "No matching distribution" in installed.stderr + \
            installed.stdout:
        pytest.skip(f"no package index to fetch httpx and rich from: {installed.stderr[-300:]}")
    assert installed.returncode == 0, installed.stderr
    return venv


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with served(tmp_path_factory.mktemp("server")) as running:
        yield running


def test_the_wheel_holds_the_submit_command_and_the_contract_only(tmp_path: Path):
    spec = importlib.util.spec_from_file_location("cli_wheel", REPO / "student-cli" /
                                                  "cli_wheel.py")
    assert spec is not None and spec.loader is not None
    cli_wheel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli_wheel)
    with zipfile.ZipFile(tmp_path / cli_wheel.build_wheel(str(tmp_path))) as wheel:
        names = wheel.namelist()
        meta = wheel.read(next(n for n in names if n.endswith("/METADATA"))).decode()
    assert {n.split("/")[0] for n in names} == {"flashjudge", "flashjudge_cli",
                                               f"flashjudge_cli-{cli_wheel.version()}.dist-info"}
    assert "flashjudge_cli/commands/submit.py" in names
    assert "flashjudge_cli/commands/serve.py" not in names
    assert [line for line in meta.splitlines() if line.startswith("Requires-Dist")] == [
        "Requires-Dist: httpx>=0.27", "Requires-Dist: rich>=13.7"]


def test_a_fresh_laptop_gets_flashjudge_submit_without_the_server(fresh: Path, site: Site,
                                                                 tmp_path: Path):
    python, flashjudge = fresh / "bin" / "python", fresh / "bin" / "flashjudge"
    laptop = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no PYTHONPATH to the repository
    for module in SERVER_ONLY:
        absent = subprocess.run([str(python), "-c", f"import {module}"], capture_output=True,
                                env=laptop)
        assert absent.returncode != 0, f"{module} came with the CLI"
    listed = subprocess.run([str(flashjudge), "--help"], capture_output=True, text=True,
                            env=laptop)
    commands = [line.split()[0] for line in listed.stdout.splitlines() if line.startswith("    ")]
    assert commands == ["submit"]
    source = tmp_path / "hw4.c"
    source.write_text("int main(void) { return 0; }\n")
    token = site.accounts["alice"].headers["Authorization"].split()[-1]
    sent = subprocess.run(
        [str(flashjudge), "submit", str(source), "--server", site.url, "--language",
         "c-program", "--no-wait"], capture_output=True, text=True, timeout=120,
        env={"FLASHJUDGE_TOKEN": token, **laptop},
        cwd=tmp_path)
    assert sent.returncode == 0, sent.stdout + sent.stderr
    with site.db() as db:
        stored = db.scalars(select(Submission)).one()
        assert (stored.user.username, stored.language) == ("alice", "c-program")
