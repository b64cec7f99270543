"""Suites as data: a suite is a TOML file in this package (hw4.toml, hw4-mini.toml).

A suite lists its tests (id, shape, time limit, seed), the tolerance and its scoring rule, which
belongs to the suite, not to the code: hw4 keeps the course's max(0, 60 - 3k) for k failed tests,
hw4-mini gives points per passed test. Keeping this in data means a TA can add a suite without
touching code, and the judge, the CLI and the grades all read the same numbers. Whatever the
rule, a submission that passes no test scores 0 (a compile error included).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import Any

from kernels.fileformat import FormatError, InputHeader

VALUE_KINDS = ("uniform", "zero-q")  # zero-q: Q = 0, softmax uniform (only for guard tests)


class SuiteError(ValueError):
    """A suite that does not exist or whose file is malformed; the message names the field."""


@dataclass(frozen=True)
class TestSpec:
    """One test: the input's shape, its limit and the seed its data comes from."""

    __test__ = False  # not a pytest class despite the name

    id: str  # "t01"
    B: int  # batches
    N: int  # sequence length
    d: int  # head dimension
    time_limit_s: float  # wall-time limit of the whole process
    seed: int  # the generator's seed for this test
    scale: float = 3.0  # values are uniform in [-scale, scale]
    values: str = "uniform"  # how the generator fills Q, K, V (see VALUE_KINDS)

    @property
    def header(self) -> InputHeader:
        return InputHeader(self.B, self.N, self.d)


RULES = ("deduct", "per-test")  # the scoring rules a suite file may name


@dataclass(frozen=True)
class Scoring:
    """How passed tests become points.

    "deduct": max(floor, full - per_failed * failed), the course's max(0, 60 - 3k); judging only
    some of the tests, the full mark is per_failed per judged test (at most `full`).
    "per-test": per_test points for each passed test.
    """

    rule: str = "deduct"  # one of RULES
    full: int = 60  # deduct: the score with every test passed
    per_failed: int = 3  # deduct: points lost per failed test
    floor: int = 0  # deduct: the lowest score of a submission that passed some test
    per_test: int = 0  # per-test: points per passed test

    def best(self, judged: int) -> int:
        """The best possible score when `judged` tests are run."""
        if self.rule == "per-test":
            return self.per_test * judged
        return min(self.full, self.per_failed * judged)

    def points(self, passed: int, judged: int) -> int:
        """The score of `passed` passed tests out of `judged`; 0 when none passed."""
        if passed <= 0:
            return 0
        if self.rule == "per-test":
            return self.per_test * passed
        return max(self.floor, self.best(judged) - self.per_failed * (judged - passed))

    def describe(self) -> str:
        """The rule in one line, for tables and pages."""
        if self.rule == "per-test":
            return f"{self.per_test} points per passed test"
        return f"max({self.floor}, {self.full} - {self.per_failed} x failed tests)"


@dataclass(frozen=True)
class Suite:
    """A named list of tests judged with one tolerance and one scoring rule."""

    name: str  # "hw4"
    tolerance: float  # absolute error allowed per value
    tests: list[TestSpec]  # in display order
    scoring: Scoring = field(default_factory=Scoring)  # how passed tests become a score
    description: str = ""  # one line for people
    own_kernels_only: bool = False  # no library attention or matrix kernels may run (rule 3:
    # worker/harness/census.py; checked where the runner records its kernels)

    def test(self, test_id: str) -> TestSpec:
        """The test named `test_id`; SuiteError listing the known ids otherwise."""
        for spec in self.tests:
            if spec.id == test_id:
                return spec
        known = ", ".join(t.id for t in self.tests)
        raise SuiteError(f"suite {self.name} has no test {test_id!r} (tests: {known})")

    def score_of(self, passed: int) -> int:
        """The score of a judging of these tests in which `passed` passed (the suite's rule;
        named apart from the old `score(failed)` so that no caller keeps the old meaning)."""
        return self.scoring.points(passed, len(self.tests))

    @property
    def max_score(self) -> int:
        """The best possible score of a judging of these tests."""
        return self.scoring.best(len(self.tests))


def suite_names() -> list[str]:
    """Names of the suites shipped in this package."""
    files = resources.files("testcases").iterdir()
    return sorted(p.name[:-5] for p in files if p.name.endswith(".toml"))


def load_suite(name: str) -> Suite:
    """Load a shipped suite by name (e.g. "hw4")."""
    resource = resources.files("testcases") / f"{name}.toml"
    if not resource.is_file():
        raise SuiteError(f"unknown suite {name!r}: choose one of {', '.join(suite_names())}")
    return parse_suite(tomllib.loads(resource.read_text(encoding="utf-8")), f"{name}.toml")


def parse_suite(data: dict[str, Any], source: str = "suite") -> Suite:
    """Build a Suite from parsed TOML, checking every field."""
    tests = [_parse_test(t, f"{source}: tests[{i}]") for i, t in enumerate(data.get("tests", []))]
    if not tests:
        raise SuiteError(f"{source}: no [[tests]] entries")
    ids = [t.id for t in tests]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise SuiteError(f"{source}: duplicate test ids {', '.join(duplicates)}")
    scoring = _parse_scoring(data.get("scoring", {}), len(tests), f"{source}: [scoring]")
    return Suite(
        name=str(_require(data, "name", source)),
        tolerance=float(_require(data, "tolerance", source)),
        tests=tests,
        scoring=scoring,
        description=str(data.get("description", "")),
        own_kernels_only=bool(data.get("own_kernels_only", False)),
    )


def _parse_scoring(data: dict[str, Any], tests: int, where: str) -> Scoring:
    """The [scoring] table, checked: a known rule, whole non-negative numbers, and a rule under
    which failing every test scores 0. Without one: the course's 3 points per failed test, the
    full mark 60 or 3 per test if there are fewer than 20 (so failing everything scores 0)."""
    if not data:
        return Scoring(full=min(Scoring.full, Scoring.per_failed * tests))
    unknown = sorted(set(data) - {f.name for f in fields(Scoring)})
    if unknown:
        raise SuiteError(f"{where}: unknown key(s) {', '.join(unknown)}")
    rule = str(data.get("rule", "deduct"))
    if rule not in RULES:
        raise SuiteError(f"{where}: rule must be one of {', '.join(RULES)}, not {rule!r}")
    numbers = {k: v for k, v in data.items() if k != "rule"}
    for key, value in numbers.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SuiteError(f"{where}: {key} must be a whole number >= 0, not {value!r}")
    scoring = Scoring(rule=rule, **numbers)
    if rule == "per-test" and scoring.per_test <= 0:
        raise SuiteError(f"{where}: rule per-test needs per_test > 0")
    if rule == "deduct" and scoring.full > scoring.per_failed * tests:
        raise SuiteError(
            f"{where}: failing all {tests} tests would still leave "
            f"{scoring.full - scoring.per_failed * tests} of {scoring.full} points: make "
            f"per_failed at least {-(-scoring.full // tests)}, or use rule = \"per-test\"")
    return scoring


def _require(data: dict[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise SuiteError(f"{where}: missing {key!r}")
    return data[key]


def _parse_test(data: dict[str, Any], where: str) -> TestSpec:
    keys = ("id", "B", "N", "d", "time_limit_s", "seed")
    id_, B, N, d, limit, seed = (_require(data, k, where) for k in keys)
    spec = TestSpec(
        str(id_),
        int(B),
        int(N),
        int(d),
        float(limit),
        int(seed),
        float(data.get("scale", 3.0)),
        str(data.get("values", "uniform")),
    )
    try:
        spec.header.validate()
    except FormatError as exc:
        raise SuiteError(f"{where} ({spec.id}): {exc}") from exc
    if spec.seed < 0:
        raise SuiteError(f"{where} ({spec.id}): seed must be >= 0, not {spec.seed}")
    if spec.values not in VALUE_KINDS:
        raise SuiteError(f"{where} ({spec.id}): values must be one of {', '.join(VALUE_KINDS)}")
    return spec
