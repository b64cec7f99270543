"""Small suites built in code, for tests that need a test nobody would ship (tiny values, Q = 0)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from testcases.suite import Suite, parse_suite


def make_suite(tests: list[dict[str, Any]], name: str = "unit", tolerance: float = 5e-3) -> Suite:
    """A suite from test dicts; shape/limit/seed default to a tiny valid test."""
    defaults = {"B": 2, "N": 40, "d": 32, "time_limit_s": 1.0, "seed": 1}
    entries = [{**defaults, "id": f"u{i + 1:02d}", **t} for i, t in enumerate(tests)]
    return parse_suite({"name": name, "tolerance": tolerance, "tests": entries})


SuiteFactory = Callable[[list[dict[str, Any]]], Suite]


@pytest.fixture
def suite_factory() -> SuiteFactory:
    """make_suite, for tests that build their own odd tests."""
    return make_suite


@pytest.fixture
def tiny_suite() -> Suite:
    """Two ordinary tests, one with an odd N."""
    return make_suite([{"seed": 11}, {"N": 33, "d": 64, "seed": 12}])
