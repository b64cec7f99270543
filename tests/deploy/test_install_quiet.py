"""Installing flashjudge prints no setuptools deprecation banner: `project.license` is an SPDX
string (PEP 639), which setuptools >= 77 reads without the "as a TOML table is deprecated"
warning it printed three times per `make venv`."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_building_the_project_warns_of_nothing_and_names_the_license(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):  # the metadata alone: no packages needed
        shutil.copy(REPO / name, source / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w",
                            str(tmp_path / "out"), str(source)], capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    said = built.stdout + built.stderr
    assert "deprecated" not in said.lower(), said[-3000:]
    (wheel,) = (tmp_path / "out").glob("flashjudge-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        assert "License-Expression: MIT" in archive.read(meta).decode()
