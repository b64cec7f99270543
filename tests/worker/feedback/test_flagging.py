"""The speed of light: impossible kernel times are flagged for TAs, honest ones never."""

from __future__ import annotations

import pytest

from flashjudge.contract import LANGUAGES
from worker.feedback.flagging import flag_results
from worker.feedback.speed import SpeedOfLight

KERNEL = LANGUAGES["cuda-kernel"]
SHAPES = {"t01": (320, 128, 32), "t30": (2, 32768, 64)}
# t30 = 2^39 FLOPs: 9.16 ms at 60 TFLOP/s (FP32), 0.916 ms at 600 TFLOP/s (tensor cores)
H100ISH = SpeedOfLight("NVIDIA H100 <test>", 132, 60.0, 3000.0, 0.35, "now",
                     tensor_peak_tflops=600.0)


def kernel_test(test_id: str, seconds: float, min_s: float | None = None,
                verdict: str = "AC") -> dict[str, object]:
    timing = {"mean_s": seconds, "std_s": 0.0, "min_s": min_s or seconds, "runs": 10,
              "fresh_calls": 5}
    return {"id": test_id, "verdict": verdict, "seconds": seconds, "timing": timing}


def test_a_time_below_the_compute_bound_is_flagged_with_a_reason() -> None:
    flags = flag_results([kernel_test("t30", 0.0005)], SHAPES, H100ISH, KERNEL)
    assert [f.test_id for f in flags] == ["t30"]
    assert "compute-bound" in flags[0].reason and "NVIDIA H100 <test>" in flags[0].reason
    assert flags[0].least_s == 2**39 / 600e12
    assert flags[0].to_dict()["floor_s"] == flags[0].least_s  # the key the service stores


def test_an_honest_tensor_core_kernel_faster_than_the_fp32_peak_is_not_flagged() -> None:
    honest = kernel_test("t30", 0.003)  # 183 TFLOP/s: above FP32, well below tensor cores
    assert flag_results([honest], SHAPES, H100ISH, KERNEL) == []
    fp32_only = SpeedOfLight("old", 80, 60.0, 3000.0, 0.35, "now")  # no tensor measurement
    assert [f.test_id for f in flag_results([honest], SHAPES, fp32_only, KERNEL)] == ["t30"]


def test_within_the_margin_of_the_least_time_is_not_flagged() -> None:
    just_above = kernel_test("t30", 0.95 * 2**39 / 600e12)
    assert flag_results([just_above], SHAPES, H100ISH, KERNEL) == []


def test_a_small_test_is_held_to_the_memory_bound() -> None:
    # t01 must move 20,971,520 bytes: 6.99 us at 3000 GB/s, more than its 1.1 us of tensor math
    flags = flag_results([kernel_test("t01", 5e-6)], SHAPES, H100ISH, KERNEL)
    assert len(flags) == 1 and "memory-bound" in flags[0].reason


def test_one_impossibly_fast_call_is_enough() -> None:
    flags = flag_results([kernel_test("t30", 0.002, min_s=0.0001)], SHAPES, H100ISH,
                         KERNEL)
    assert flags[0].seconds == 0.0001


def test_wrong_answers_and_whole_process_times_are_not_flagged() -> None:
    assert flag_results([kernel_test("t30", 0.0001, verdict="WA")], SHAPES, H100ISH,
                        KERNEL) == []
    program = {"id": "t30", "verdict": "AC", "seconds": 0.0001}
    assert flag_results([program], SHAPES, H100ISH, LANGUAGES["cuda-program"]) == []


@pytest.mark.parametrize("language", ["cuda-kernel", "triton-kernel"])
def test_every_language_timed_by_the_kernel_timer_is_held_to_the_speed_of_light(
        language: str) -> None:
    facts = LANGUAGES[language]
    assert [f.test_id for f in flag_results([kernel_test("t30", 0.0005)], SHAPES, H100ISH,
                                            facts)] == ["t30"]
