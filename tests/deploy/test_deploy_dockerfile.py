"""The Dockerfile: the stages compose builds, pinned bases and packages, least privilege."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from . import composefile, dockerfile

REPO = composefile.REPO
STAGES = dockerfile.parse(REPO / "Dockerfile")
PINNED_TAG = re.compile(r"^[\w./-]+:\d+\.\d+\.\d+(-[\w.-]+)?$")  # name:MAJOR.MINOR.PATCH[-variant]
# PostgreSQL has numbered its releases MAJOR.MINOR since 10: 16.9 is one exact release.
POSTGRES_TAG = re.compile(r"^postgres:\d+\.\d+(-[\w.-]+)?$")


def pinned(spec: str) -> dict[str, str]:
    """name -> version of each `name==version` line of a constraints file."""
    found: dict[str, str] = {}
    for line in spec.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            found[name.lower()] = version
    return found


def test_compose_builds_only_stages_that_exist() -> None:
    for file, env in (("docker-compose.yml", None), ("docker-compose.node.yml",
                      {**composefile.read_env_file(REPO / ".env.example"), "REDIS_HOST": "h"})):
        for name, service in composefile.load(file, env)["services"].items():
            if "build" in service:
                assert service["build"]["target"] in STAGES, f"{file}:{name}"


def test_base_images_are_pinned_to_exact_versions() -> None:
    for stage in STAGES.values():
        if stage.base in STAGES:  # built on an earlier stage
            continue
        assert PINNED_TAG.match(stage.base), f"{stage.name}: {stage.base} is not pinned"
    for name, service in composefile.load()["services"].items():
        if "build" not in service:
            image = service["image"]
            assert PINNED_TAG.match(image) or POSTGRES_TAG.match(image), f"{name}: {image}"


def test_the_worker_has_cuda_and_the_api_does_not() -> None:
    worker, api = STAGES["worker"], STAGES["api"]
    assert re.fullmatch(r"nvidia/cuda:12\.\d+\.\d+-devel-ubuntu24\.04", worker.base)
    assert api.base.startswith("python:") and "slim" in api.base
    apt = " ".join(worker.all("RUN"))
    for package in ("bubblewrap", "python3", "make", "g++"):
        assert re.search(rf"apt-get install[^&]*\s{re.escape(package)}\s", apt + " "), package
    assert "'flashjudge[gpu]'" in apt
    assert "flashjudge" in " ".join(api.all("RUN")) and "[gpu]" not in " ".join(api.all("RUN"))


def test_every_python_package_the_images_install_is_pinned() -> None:
    pins = pinned((REPO / "docker" / "constraints.txt").read_text())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["gpu"]
    for requirement in map(Requirement, wanted):
        name = requirement.name.lower()
        assert name in pins, f"{name} is not pinned in docker/constraints.txt"
        assert requirement.specifier.contains(pins[name]), f"{name}=={pins[name]} vs pyproject"
    for stage in STAGES.values():
        for run in stage.all("RUN"):
            if "pip install" in run or "pip wheel" in run:
                assert "-c " in run or "==" in run, f"{stage.name}: unpinned pip: {run}"


def test_services_run_as_an_unprivileged_user() -> None:
    for name in ("api", "flower"):
        assert STAGES[name].last("USER") == "flashjudge", name


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_copied_sources_exist(stage: str) -> None:
    for args in STAGES[stage].all("COPY"):
        if "--from=" in args:
            continue
        sources = [a for a in args.split() if not a.startswith("--")][:-1]
        for source in sources:
            assert (REPO / source).exists(), f"{stage}: COPY {source}"


def test_the_build_context_leaves_out_secrets_and_local_state() -> None:
    ignored = (REPO / ".dockerignore").read_text().split()
    for entry in (".env", ".git", ".venv", "data"):
        assert entry in ignored, entry
    for needed in ("pyproject.toml", "README.md", "docker"):
        assert needed not in ignored, needed


@pytest.mark.slow
def test_the_wheel_the_images_install_carries_every_data_file(tmp_path: Path) -> None:
    """The images install a built wheel, not the checkout: templates, migrations, kernels and
    suites must be package data, or the containers fail where the editable install works."""
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(REPO / "pyproject.toml", source)
    readme = REPO / "README.md"
    (source / "README.md").write_text(readme.read_text() if readme.exists() else "flashjudge\n")
    packages = ("flashjudge", "app", "worker", "kernels", "testcases")
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                             *packages], cwd=REPO, capture_output=True, text=True, check=True)
    files = [name for name in listed.stdout.splitlines() if (REPO / name).is_file()]
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp_path / "out"), str(source)], check=True, capture_output=True,
                   timeout=300)
    (wheel,) = (tmp_path / "out").glob("flashjudge-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    data = {name for name in files if not name.endswith((".py", ".pyc"))}
    assert data - shipped == set(), "add these patterns to [tool.setuptools.package-data]"
