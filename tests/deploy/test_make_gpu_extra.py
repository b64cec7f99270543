"""`make run` on a GPU node installs what the GPU needs itself: the extra follows
what nvidia-smi says, and a machine without a GPU installs none."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.app.utils.processes import REPO

SMI = """#!/bin/sh
case "$*" in
  *-L*) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)";;
  *) echo "| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: {cuda}     |";;
esac
"""


def planned_install(tmp_path: Path, cuda: str | None) -> str:
    """The pip line `make -n venv` would run, with a fake nvidia-smi (or none) on the PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    path = "/usr/bin:/bin"
    if cuda is not None:
        (bin_dir / "nvidia-smi").write_text(SMI.replace("{cuda}", cuda))
        (bin_dir / "nvidia-smi").chmod(0o755)
        path = f"{bin_dir}:{path}"
    env = {**os.environ, "PATH": path}
    done = subprocess.run(["make", "-n", "venv", f"VENV={tmp_path / 'venv'}"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return next(line for line in done.stdout.splitlines() if "install -q -e" in line)


@pytest.mark.parametrize("cuda, extra", [("13.0", "'.[dev,gpu13]'"), ("12.8", "'.[dev,gpu]'"),
                                         (None, "'.[dev]'")])
def test_the_gpu_extra_follows_the_driver(tmp_path: Path, cuda: str | None, extra: str) -> None:
    assert planned_install(tmp_path, cuda).endswith(extra)
