"""The CUDA probes under bench/ build with this toolkit: a GPU session's few minutes must not go to
fixing a probe that rotted since the last one (device time is the scarcest thing a bench has)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROBES = sorted(p.name for p in (REPO / "bench").glob("*.cu"))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("probe", PROBES)
def test_the_probe_compiles(probe: str, tmp_path: Path) -> None:
    done = subprocess.run(["nvcc", "-O1", "-arch=sm_90", "-c", str(REPO / "bench" / probe),
                           "-o", str(tmp_path / "probe.o")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr

