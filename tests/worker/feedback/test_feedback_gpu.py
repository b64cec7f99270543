"""On a GPU: the sanitizer diagnosis, the speed of light and an ncu profile, for real.

FLASHJUDGE_FEEDBACK_OUT, when set, is a dir where each test leaves what it got as JSON (the GPU
check script prints them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from flashjudge.contract import Verdict
from worker.feedback.diagnosis import diagnose
from worker.feedback.ncu_profile import profile
from worker.machine import Machine
from worker.pipeline import JudgeConfig, JudgeRequest, judge

PROGRAMS = Path(__file__).with_name("feedback_programs")
HOSTILE = Path(__file__).parents[2] / "hostile"


def keep(name: str, data: dict[str, Any]) -> None:
    out = os.environ.get("FLASHJUDGE_FEEDBACK_OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"{name}.json").write_text(json.dumps(data, indent=2, default=str))


def planted(source: Path) -> set[str]:
    """"file:line" of every line marked // PLANTED (where the sanitizer must point)."""
    lines = source.read_text().splitlines()
    return {f"{source.name}:{i}" for i, line in enumerate(lines, 1) if "// PLANTED" in line}


@pytest.mark.gpu
def test_a_misaligned_float4_shared_store_is_named_at_its_line(
        engine_cache: Path, judge_config: JudgeConfig) -> None:
    source = PROGRAMS / "misaligned-shared" / "hw4.cu"
    request = JudgeRequest("cuda-program", {"hw4.cu": source.read_bytes()}, "hw4-mini", ["t02"])
    result = judge(request, engine_cache, config=judge_config)
    assert result.tests[0].verdict in (Verdict.RE, Verdict.WA, Verdict.NO), result.to_dict()
    diagnosis = diagnose(request, result, engine_cache, machine=judge_config.machine)
    assert diagnosis is not None
    keep("diagnosis-misaligned", diagnosis.to_dict())
    assert diagnosis.error is None, diagnosis.error
    first = diagnosis.findings[0]
    assert first.kind == "Invalid __shared__ write of size 16 bytes", diagnosis.to_dict()
    assert first.location is not None
    assert {first.location.short} == planted(source)
    assert any("misaligned" in d for d in first.details or [])
    assert first.thread is not None and first.block is not None
    assert diagnosis.shape == (2, 128, 64)


@pytest.mark.gpu
def test_speed_of_light_numbers_are_plausible_and_cached(tmp_path: Path,
                                                         machine: Machine) -> None:
    pytest.importorskip("cupy")
    from worker.feedback.speed_of_light import measure_speed_of_light, profile_path

    measured = measure_speed_of_light(tmp_path, suite="hw4-mini", machine=machine)
    keep("gpu-profile-mini", measured.to_dict())
    assert 5 < measured.peak_tflops < 300
    assert 300 < measured.bandwidth_gbs < 20000
    assert measured.tensor_peak_tflops > measured.peak_tflops
    assert 0.01 < measured.cuda_start_s < 5
    assert set(measured.reference_s["hw4-mini"]) >= {"t01", "t02"}
    assert all(0 < s < 1 for s in measured.reference_s["hw4-mini"].values())
    assert profile_path(tmp_path, measured.name, measured.driver).is_file()
    # the second call reads the cache
    assert measure_speed_of_light(tmp_path, suite="hw4-mini", machine=machine) == measured


@pytest.mark.gpu
def test_a_profile_of_the_correct_program_summarises_its_kernel(
        engine_cache: Path, tmp_path: Path, machine: Machine) -> None:
    source = HOSTILE / "cuda-correct" / "hw4.cu"
    request = JudgeRequest("cuda-program", {"hw4.cu": source.read_bytes()}, "hw4-mini")
    result = profile(request, engine_cache, "t02", tmp_path, machine=machine)
    keep("profile-cuda-correct", result.to_dict())
    assert result.error is None, result.error
    main = result.main
    assert main is not None and main.duration_s is not None and main.duration_s > 0
    assert main.achieved_occupancy_pct is not None and 0 < main.achieved_occupancy_pct <= 100
    assert main.sm_throughput_pct is not None and main.memory_throughput_pct is not None
    assert main.stalls
    assert result.report_path is not None and Path(result.report_path).stat().st_size > 0


@pytest.mark.gpu
def test_a_shared_overflow_in_solve_is_named_through_the_harness(
        engine_cache: Path, judge_config: JudgeConfig) -> None:
    source = PROGRAMS / "kernel-shared-overflow" / "solve.cu"
    request = JudgeRequest("cuda-kernel", {"solve.cu": source.read_bytes()}, "hw4-mini", ["t02"])
    result = judge(request, engine_cache, config=judge_config)
    assert result.tests[0].verdict in (Verdict.WA, Verdict.RE), result.to_dict()
    diagnosis = diagnose(request, result, engine_cache, machine=judge_config.machine)
    assert diagnosis is not None
    keep("diagnosis-kernel-shared-overflow", diagnosis.to_dict())
    assert diagnosis.error is None, diagnosis.error
    first = diagnosis.findings[0]
    assert first.kind == "Invalid __shared__ write of size 4 bytes", diagnosis.to_dict()
    assert first.location is not None
    assert {first.location.short} == planted(source)
