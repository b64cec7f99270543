"""nvcc builds on this machine: the cuda-kernel harness, and a course Makefile for this GPU."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.worker.hostile_corpus import load_case
from worker.harness.build import harness_binary
from worker.languages import BuildSettings, get_language
from worker.languages.arch import supported_archs
from worker.pipeline import JudgeRequest, judge
from worker.running.build import build
from worker.sandbox.bwrap import Sandbox

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@needs_nvcc
def test_harness_compiles_once_and_is_reused(tmp_path: Path) -> None:
    binary = harness_binary(tmp_path, "90")
    assert binary.read_bytes()[:4] == b"\x7fELF"
    stamp = binary.stat().st_mtime_ns
    assert harness_binary(tmp_path, "90") == binary and binary.stat().st_mtime_ns == stamp


@needs_nvcc
@pytest.mark.slow
def test_course_makefile_builds_in_the_sandbox_for_this_gpu(cpu_sandbox: Sandbox) -> None:
    case = load_case("cuda-course-makefile")
    settings = BuildSettings(gpu_arch="90", supported_archs=supported_archs())
    artifacts = Path(tempfile.mkdtemp())
    try:
        outcome = build(get_language("cuda-program"), case.files, settings, cpu_sandbox, artifacts)
        assert outcome.compile.ok, outcome.compile.log
        assert outcome.product is not None and outcome.product.name == "hw4"
        if "61" not in settings.supported_archs:  # CUDA 13 refuses sm_61: rewritten, and said so
            assert "changed sm_61 to sm_90" in outcome.compile.log
            assert "-arch=sm_90" in outcome.compile.log  # make echoes the rewritten command
    finally:
        shutil.rmtree(artifacts)


@needs_nvcc
@pytest.mark.slow
@pytest.mark.skipif(Path("/dev/nvidiactl").exists(), reason="this machine has a GPU")
def test_kernel_track_without_a_gpu_is_our_failure_not_the_students(
        engine_cache: Path, cpu_sandbox: Sandbox) -> None:
    """Everything up to CUDA runs for real (build in the sandbox, harness, both inputs bound):
    the harness then finds no GPU before loading the student's code, which is an SE to retry."""
    files = load_case("kernel-correct").files
    result = judge(JudgeRequest(None, files, "hw4-mini", ["t07"]), engine_cache,
                   sandbox=cpu_sandbox)
    assert result.language == "cuda-kernel" and result.compile.ok
    assert result.tests[0].verdict == "SE"
    assert result.system_error and "harness set-up failed" in result.system_error
