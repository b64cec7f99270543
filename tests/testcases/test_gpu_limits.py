"""Limits per GPU model: hw4's table, the matching rule, the unlisted rule and bad tables."""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from testcases.gpu_limits import load_gpu_limits, parse_gpu_limits, suite_on_gpu
from testcases.suite import SuiteError, load_suite

RTX = "NVIDIA GeForce RTX 3070"


def limits_of(suite, gpu):
    return {t.id: t.time_limit_s for t in suite_on_gpu(suite, gpu).tests}


def test_the_course_models_get_their_tiers_and_the_cpu_track_keeps_the_suites_own() -> None:
    hw4 = load_suite("hw4")
    own = {t.id: t.time_limit_s for t in hw4.tests}
    rtx = limits_of(hw4, RTX)
    assert {own[i]: rtx[i] for i in own} == {2.0: 1.0, 6.0: 3.0, 10.0: 5.0}
    assert limits_of(hw4, "NVIDIA GeForce GTX 1080") == own
    assert limits_of(hw4, "cpu") == own and limits_of(hw4, None) == own


def test_an_unlisted_model_gets_the_unlisted_tier_and_a_variant_its_base_model() -> None:
    hw4 = load_suite("hw4")
    own = {t.id: t.time_limit_s for t in hw4.tests}
    assert limits_of(hw4, "NVIDIA H100 80GB HBM3") == own  # unlisted: the GTX 1080's
    assert limits_of(hw4, "NVIDIA GeForce RTX 3070 Ti") == limits_of(hw4, RTX)


def test_the_longest_listed_model_wins() -> None:
    hw4 = load_suite("hw4")
    table = {"gpu_limits": {"reference": "GTX 1080", "models": {
        "GTX 1080": [2.0, 6.0, 10.0], "RTX 3070": [1.0, 3.0, 5.0],
        "RTX 3070 Ti": [0.8, 2.5, 4.0]}}}
    limits = parse_gpu_limits(table, hw4.tests)
    assert limits is not None and limits.model_for("NVIDIA GeForce RTX 3070 Ti") == "RTX 3070 Ti"
    ti = {t.time_limit_s for t in suite_on_gpu(hw4, "NVIDIA GeForce RTX 3070 Ti", limits).tests}
    assert ti == {0.8, 2.5, 4.0}


def test_a_suite_without_a_table_is_judged_with_its_own_limits() -> None:
    mini = load_suite("hw4-mini")
    assert load_gpu_limits(mini) is None
    assert suite_on_gpu(mini, RTX) == mini


@pytest.mark.parametrize("table, field", [
    ({"reference": "GTX 1080", "models": {"GTX 1080": [2.0, 6.0]}}, "models.GTX 1080"),
    ({"reference": "GTX 1080", "models": {"GTX 1080": [2.0, 6.0, 10.0],
                                          "RTX 3070": [3.0, 1.0, 5.0]}}, "ascending"),
    ({"reference": "Titan", "models": {"GTX 1080": [2.0, 6.0, 10.0]}}, "gpu_limits.reference"),
    ({"reference": "GTX 1080", "unlisted": "H100",
      "models": {"GTX 1080": [2.0, 6.0, 10.0]}}, "gpu_limits.unlisted"),
    ({"reference": "GTX 1080", "models": {"GTX 1080": [1.0, 6.0, 10.0]}}, "tests' own"),
    ({"reference": "GTX 1080", "models": {}}, "at least one model"),
])
def test_a_bad_table_is_refused_naming_the_field(table: dict, field: str) -> None:
    with pytest.raises(SuiteError, match=field):
        parse_gpu_limits({"gpu_limits": table}, load_suite("hw4").tests, "hw4.toml")


def test_the_shipped_table_parses_as_toml_and_names_the_reference() -> None:
    text = (resources.files("testcases") / "hw4.toml").read_text()
    assert tomllib.loads(text)["gpu_limits"]["reference"] == "GTX 1080"
