"""The CUDA injection every GPU run gets builds with this machine's nvcc, into a shared library
the CUDA driver can load (it exports InitializeInjection) that brings CUPTI and no CUDA runtime of
its own (the program's runtime stays the one it linked)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from worker.harness.build import HarnessBuildError, injection_library


def test_the_injection_builds_and_exports_what_the_driver_calls(tmp_path: Path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc here")
    try:
        library = injection_library(tmp_path)
    except HarnessBuildError as exc:
        pytest.skip(f"no CUPTI with this toolkit: {exc}")
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True,
                             text=True, check=True).stdout
    assert " T InitializeInjection" in symbols
    needed = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True,
                            check=True).stdout
    assert "libcupti.so" in needed
    assert "libcudart" not in needed and "cudart" not in symbols
    assert injection_library(tmp_path) == library  # built once, then reused
