"""The statistic and its band on sample sets whose answers are known by hand."""

from __future__ import annotations

import math

import pytest

from flashjudge.contract import LANGUAGES
from worker.timing.stats import (
    MAD_FACTOR,
    MAD_TO_SIGMA,
    MEDIAN_SE,
    Estimate,
    NoiseModel,
    estimate,
    lower_median,
    mad_sigma,
    noise_for,
    total_estimate,
)


def test_lower_median_takes_the_middle_run_or_the_faster_middle_one() -> None:
    assert lower_median([1.69, 1.29, 1.24]) == 1.29
    assert lower_median([3.0, 1.0]) == 1.0
    assert lower_median([4.0, 1.0, 3.0, 2.0]) == 2.0
    assert lower_median([5.0]) == 5.0


def test_no_runs_is_an_error_naming_the_field() -> None:
    with pytest.raises(ValueError, match="times"):
        lower_median([])


def test_one_slow_outlier_moves_neither_the_statistic_nor_sigma() -> None:
    quiet = estimate([1.00, 1.01, 1.02])
    loud = estimate([1.00, 1.01, 5.00])
    assert loud.statistic == quiet.statistic == 1.01
    assert loud.se == pytest.approx(quiet.se)


def test_mad_sigma_of_three_known_runs() -> None:
    # median 2, deviations 1, 0, 1: MAD 1
    assert mad_sigma([1.0, 2.0, 3.0]) == pytest.approx(MAD_TO_SIGMA * MAD_FACTOR[3])
    assert mad_sigma([7.0]) == 0.0


def test_band_of_the_h100_t22_runs() -> None:
    result = estimate([1.69, 1.29, 1.24])
    sigma = MAD_TO_SIGMA * MAD_FACTOR[3] * 0.05  # MAD: deviations 0.40, 0, 0.05
    assert result.statistic == 1.29
    assert result.se == pytest.approx(MEDIAN_SE * sigma / math.sqrt(3))
    assert result.low == pytest.approx(1.29 - 1.96 * result.se)
    assert result.high == pytest.approx(1.29 + 1.96 * result.se)
    assert result.method == "measured" and result.n == 3
    assert result.rse == pytest.approx(result.se / 1.29)


def test_one_run_takes_the_prior_noise() -> None:
    result = estimate([2.0], NoiseModel(prior_rel_sd=0.03))
    assert result.se == pytest.approx(0.06)
    assert result.method == "prior"


def test_two_runs_never_claim_less_than_the_prior() -> None:
    assert estimate([2.0, 2.0]).se == pytest.approx(MEDIAN_SE * 0.06 / math.sqrt(2))


def test_identical_runs_still_have_the_floor_noise() -> None:
    result = estimate([2.0, 2.0, 2.0], NoiseModel(floor_rel_sd=0.002, floor_abs_sd=0.001))
    assert result.se == pytest.approx(MEDIAN_SE * 0.004 / math.sqrt(3))
    tiny = estimate([0.01, 0.01, 0.01], NoiseModel(floor_rel_sd=0.002, floor_abs_sd=0.001))
    assert tiny.se == pytest.approx(MEDIAN_SE * 0.001 / math.sqrt(3))


def test_more_alike_runs_narrow_the_band() -> None:
    runs = [1.00, 1.02, 0.98, 1.01, 0.99, 1.00, 1.02, 0.98, 1.01]
    assert estimate(runs).se < estimate(runs[:3]).se


def test_the_band_never_goes_below_zero() -> None:
    assert estimate([0.001, 0.5, 0.9]).low == 0.0


def test_total_adds_statistics_and_the_errors_in_quadrature() -> None:
    parts = [Estimate(10.0, 3.0, 4.0, 16.0, 3, "measured"),
             Estimate(20.0, 4.0, 12.0, 28.0, 5, "measured")]
    total = total_estimate(parts, NoiseModel(z=2.0, judging_rel_sd=0.0))
    assert (total.statistic, total.se, total.n, total.method) == (30.0, 5.0, 8, "sum")
    assert (total.low, total.high) == (20.0, 40.0)


def test_a_whole_programs_total_carries_the_noise_more_runs_cannot_remove() -> None:
    """However many runs, a whole program's total keeps the judging's own 3.5%: two judgings of
    one file read 3.2-3.8% apart on the H200s while per-test bands claimed less."""
    settled = [Estimate(1.0, 0.0, 1.0, 1.0, 9, "measured") for _ in range(10)]
    program = total_estimate(settled, noise_for(LANGUAGES["cuda-program"]))
    assert program.se == pytest.approx(0.35) and program.rse == pytest.approx(0.035)
    kernel = total_estimate(settled, noise_for(LANGUAGES["cuda-kernel"]))
    assert kernel.se == 0.0  # not measured for the kernel timers: nothing claimed


def test_estimate_survives_its_message_form() -> None:
    result = estimate([1.69, 1.29, 1.24])
    data = result.to_dict()
    assert data["rse"] == pytest.approx(result.rse)
    assert Estimate.from_dict(data) == result


def test_a_kernel_test_of_a_tenth_of_a_millisecond_gets_a_band_of_percent_not_thousands() -> None:
    """A cuda-kernel "run" is a mean over many timed calls: the whole-program floor of 1 ms of
    process noise read +-2500% on the H100's 0.1 ms t01 before kernels got their own model."""
    one_run = [1.0e-4]
    assert estimate(one_run, noise_for(LANGUAGES["cuda-program"])).rse > 5  # what it used to show
    kernel = estimate(one_run, noise_for(LANGUAGES["cuda-kernel"]))
    assert 0.01 <= kernel.rse <= 0.05
    assert noise_for(LANGUAGES["c-program"]) == noise_for(None) == NoiseModel()


def test_a_triton_kernel_is_timed_by_the_kernel_timer_and_gets_its_noise_model() -> None:
    """triton-kernel's row says its timer is the kernel's, and the noise follows the row: its
    0.1 ms test reads a band of percent, as cuda-kernel's does (it had the whole program's)."""
    triton = LANGUAGES["triton-kernel"]
    assert triton.timer == LANGUAGES["cuda-kernel"].timer == "kernel"
    assert noise_for(triton) == noise_for(LANGUAGES["cuda-kernel"]) != noise_for(None)
    assert 0.01 <= estimate([1.0e-4], noise_for(triton)).rse <= 0.05
