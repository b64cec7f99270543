"""The shipped suites match the homework's contract, and malformed suites are refused by name."""

from __future__ import annotations

import dataclasses

import pytest

from testcases.suite import SuiteError, load_suite, parse_suite, suite_names

# t: (B, N, d), copied from hw4-spec.md's table
HW4_SHAPES = {
    "t01": (320, 128, 32),
    "t02": (160, 128, 64),
    "t03": (160, 256, 32),
    "t04": (80, 256, 64),
    "t05": (80, 512, 32),
    "t06": (40, 512, 64),
    "t07": (40, 1024, 32),
    "t08": (20, 1024, 64),
    "t09": (20, 2048, 32),
    "t10": (10, 2048, 64),
    "t11": (13600, 128, 32),
    "t12": (9600, 128, 64),
    "t13": (6400, 256, 32),
    "t14": (2000, 256, 64),
    "t15": (2000, 512, 32),
    "t16": (800, 512, 64),
    "t17": (800, 1024, 32),
    "t18": (300, 1024, 64),
    "t19": (300, 2048, 32),
    "t20": (100, 2048, 64),
    "t21": (500, 2048, 32),
    "t22": (500, 2048, 64),
    "t23": (100, 4096, 32),
    "t24": (100, 4096, 64),
    "t25": (30, 8192, 32),
    "t26": (10, 8192, 64),
    "t27": (10, 16384, 32),
    "t28": (4, 16384, 64),
    "t29": (4, 32768, 32),
    "t30": (2, 32768, 64),
}


def test_hw4_has_the_thirty_spec_shapes_limits_and_tolerance() -> None:
    suite = load_suite("hw4")
    assert [t.id for t in suite.tests] == list(HW4_SHAPES)
    assert {t.id: (t.B, t.N, t.d) for t in suite.tests} == HW4_SHAPES
    limits = [t.time_limit_s for t in suite.tests]
    assert limits == [2.0] * 10 + [6.0] * 10 + [10.0] * 10
    assert suite.tolerance == 5e-3
    assert len({t.seed for t in suite.tests}) == 30
    assert suite.test("t12").header.input_bytes == 943_718_412


def test_hw4_score_is_the_course_rule() -> None:
    suite = load_suite("hw4")
    assert [suite.score_of(30 - k) for k in (0, 1, 3, 19, 20, 30)] == [60, 57, 51, 3, 0, 0]
    assert suite.max_score == 60


def test_judging_some_tests_scores_what_was_judged() -> None:
    suite = load_suite("hw4")
    two = dataclasses.replace(suite, tests=[suite.test("t06"), suite.test("t07")])
    assert (two.score_of(0), two.score_of(1), two.score_of(2), two.max_score) == (0, 3, 6, 6)


@pytest.mark.parametrize("name", ["hw4", "hw4-mini"])
def test_failing_every_test_scores_zero_on_every_suite(name: str) -> None:
    assert load_suite(name).score_of(0) == 0


def test_a_suite_without_a_scoring_table_scores_zero_for_failing_everything() -> None:
    test = {"id": "x1", "B": 2, "N": 64, "d": 32, "time_limit_s": 1, "seed": 3}
    suite = parse_suite({"name": "s", "tolerance": 5e-3, "tests": [test]})
    assert (suite.score_of(0), suite.score_of(1), suite.max_score) == (0, 3, 3)


def test_deduct_rules_that_leave_points_for_failing_everything_are_refused() -> None:
    test = {"id": "x1", "B": 2, "N": 64, "d": 32, "time_limit_s": 1, "seed": 3}
    tests = [{**test, "id": f"x{i}"} for i in range(10)]
    course_rule = {"full": 60, "per_failed": 3, "floor": 0}  # a 30-test rule on 10 tests
    with pytest.raises(SuiteError, match="failing all 10 tests would still leave 30 of 60"):
        parse_suite({"name": "s", "tolerance": 5e-3, "tests": tests, "scoring": course_rule})
    with pytest.raises(SuiteError, match="rule must be one of deduct, per-test"):
        parse_suite({"name": "s", "tolerance": 5e-3, "tests": tests,
                     "scoring": {"rule": "best-of"}})
    with pytest.raises(SuiteError, match="per_test must be a whole number"):
        parse_suite({"name": "s", "tolerance": 5e-3, "tests": tests,
                     "scoring": {"rule": "per-test", "per_test": -1}})


def test_mini_suite_is_small_and_has_odd_lengths_and_both_head_dims() -> None:
    suite = load_suite("hw4-mini")
    assert {t.d for t in suite.tests} == {32, 64}
    assert any(t.N % 32 for t in suite.tests)
    assert max(t.header.elements for t in suite.tests) <= 1_310_720
    assert (suite.score_of(8), suite.max_score) == (80, 100)  # its own rule: 10 per test


def test_shipped_suites_are_listed() -> None:
    assert {"hw4", "hw4-mini"} <= set(suite_names())


def test_unknown_suite_and_test_name_the_choices() -> None:
    with pytest.raises(SuiteError, match="hw4-mini"):
        load_suite("hw5")
    with pytest.raises(SuiteError, match="t31.*t01"):
        load_suite("hw4").test("t31")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"d": 48}, "d must be one of 32, 64"),
        ({"N": 0}, "N = 0"),
        ({"values": "ones"}, "values must be one of"),
    ],
)
def test_bad_test_entries_are_refused_with_the_field(change: dict, message: str) -> None:
    test = {"id": "x1", "B": 2, "N": 64, "d": 32, "time_limit_s": 1, "seed": 3, **change}
    with pytest.raises(SuiteError, match=message):
        parse_suite({"name": "s", "tolerance": 5e-3, "tests": [test]})


def test_missing_field_and_duplicate_ids_are_refused() -> None:
    test = {"id": "x1", "B": 2, "N": 64, "d": 32, "time_limit_s": 1, "seed": 3}
    no_seed = {k: v for k, v in test.items() if k != "seed"}
    with pytest.raises(SuiteError, match="missing 'seed'"):
        parse_suite({"name": "s", "tolerance": 5e-3, "tests": [no_seed]})
    with pytest.raises(SuiteError, match="duplicate test ids x1"):
        parse_suite({"name": "s", "tolerance": 5e-3, "tests": [test, test]})
