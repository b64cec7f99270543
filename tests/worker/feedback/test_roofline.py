"""The roofline figures a student sees next to each test's time, checked against hand arithmetic."""

from __future__ import annotations

import pytest

from flashjudge.contract import LANGUAGES
from worker.feedback.roofline import roofline_of, submission_roofline, work
from worker.feedback.speed import SpeedOfLight

PROFILE = SpeedOfLight(name="Test GPU", sm_count=132, peak_tflops=60.0, bandwidth_gbs=3000.0,
                     cuda_start_s=0.35, measured_at="2026-11-22T09:00:00+00:00",
                     reference_s={"hw4": {"t30": 0.02}})


def test_t01_work_bytes_and_compute_bound_least_time() -> None:
    # t01: B=320, N=128, d=32. 4*320*128^2*32 = 671,088,640 FLOPs; 16*320*128*32 = 20,971,520 B
    row = roofline_of("t01", 320, 128, 32, 0.5, PROFILE, whole_process=True)
    assert (row.flops, row.min_bytes) == (671_088_640, 20_971_520)
    assert row.intensity == 32.0  # N/4
    assert row.least_s == pytest.approx(671_088_640 / 60e12)  # 11.18 us; memory needs 6.99 us
    assert row.bound == "compute"
    assert row.achieved_tflops == pytest.approx(671_088_640 / 0.5 / 1e12)  # 0.00134 TFLOP/s
    assert row.cuda_start_s == 0.35 and row.start_share == pytest.approx(0.7)
    assert row.reference_s is None and row.speedup is None


def test_t30_achieved_throughput_and_speedup_against_the_reference() -> None:
    # t30: B=2, N=32768, d=64: 4*2*32768^2*64 = 2^39 FLOPs, 16*2*32768*64 = 2^26 bytes
    row = roofline_of("t30", 2, 32768, 64, 0.05, PROFILE, reference_s=0.02)
    assert (row.flops, row.min_bytes) == (2**39, 2**26)
    assert row.intensity == 8192.0
    assert row.achieved_tflops == pytest.approx(10.995116, rel=1e-6)
    assert row.least_s == pytest.approx(9.1625969e-3, rel=1e-6)
    assert row.fraction_of_light == pytest.approx(9.1625969e-3 / 0.05, rel=1e-6)
    assert row.speedup == pytest.approx(0.4)  # 2.5x slower than the reference kernel
    assert row.cuda_start_s is None and row.start_share is None  # cuda-kernel: GPU time only


def test_a_whole_process_is_measured_against_the_reference_in_the_cheapest_cuda_process() -> None:
    # a cuda-program cannot beat starting CUDA: 0.5 s against 0.35 s start + 0.02 s kernel
    row = roofline_of("t30", 2, 32768, 64, 0.5, PROFILE, reference_s=0.02, whole_process=True)
    assert row.speedup == pytest.approx(0.37 / 0.5)
    assert row.start_share == pytest.approx(0.7)


def test_a_tiny_shape_is_memory_bound() -> None:
    w = work(2, 128, 32)
    assert w.intensity == 32.0
    slow_memory = SpeedOfLight("g", 1, 60.0, 100.0, 0.3, "now")
    assert roofline_of("x", 2, 128, 32, 1.0, slow_memory).bound == "memory"


def test_a_submission_gets_a_row_per_timed_test_with_reference_times_of_its_suite() -> None:
    tests = [{"id": "t30", "seconds": 0.04, "verdict": "AC"},
             {"id": "t01", "seconds": 0.0, "verdict": "CE"},
             {"id": "t99", "seconds": 1.0, "verdict": "AC"}]
    shapes = {"t01": (320, 128, 32), "t30": (2, 32768, 64)}
    rows = submission_roofline(tests, shapes, PROFILE, "hw4", LANGUAGES["cuda-kernel"])
    assert [r.test_id for r in rows] == ["t30"]
    assert rows[0].speedup == pytest.approx(0.5) and rows[0].cuda_start_s is None
    assert rows[0].to_dict()["achieved_tflops"] == pytest.approx(2**39 / 0.04 / 1e12)
    assert rows[0].to_dict()["floor_s"] == rows[0].least_s  # the key the service shows
    program = submission_roofline(tests, shapes, PROFILE, "hw4", LANGUAGES["cuda-program"])
    assert program[0].cuda_start_s == 0.35  # a whole program's time starts CUDA


def test_the_profile_survives_its_json_form() -> None:
    again = SpeedOfLight.from_dict({**PROFILE.to_dict(), "from_a_newer_worker": 1})
    assert again == PROFILE
    assert again.fastest_flops == 60e12  # no tensor-core measurement: the FP32 peak
