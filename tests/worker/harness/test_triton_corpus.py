"""The Triton forger corpus (tests/hostile/forgers-triton/) and the rule-3 submissions
(tests/hostile/triton/) are well formed; judging them needs a GPU (test_triton_gpu.py)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from testcases.suite import load_suite
from tests.worker.harness.forger_corpus import (
    TRITON_FORGERS,
    ForgerCase,
    all_forgers,
    load_forger,
    parse_outcome,
)
from worker.harness.census import own_functions

CASES = all_forgers(TRITON_FORGERS)
SUBMISSIONS = Path(__file__).resolve().parents[2] / "hostile" / "triton"
# the forgers the Triton corpus must hold
REQUIRED = {"cache-pointer", "pending-stream", "tf32-timed", "batch-fusion"}


def test_the_four_attacks_of_issue_24_are_there_each_with_its_twin() -> None:
    forgers = {c.name for c in CASES if not c.is_twin}
    assert forgers >= REQUIRED
    for name in forgers:
        twin = load_forger(f"{name}-twin", TRITON_FORGERS)
        assert twin.is_twin and twin.partner == name and twin.outcomes == ("clean",)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_case_is_a_python_solve_with_a_triton_kernel(case: ForgerCase) -> None:
    tree = ast.parse(case.source)  # compiles: no GPU needed to say so
    assert {"solve", "attention_fwd"} <= own_functions(case.source), case.name
    assert any(isinstance(n, ast.ImportFrom | ast.Import) for n in tree.body)
    assert set(case.tests) <= {t.id for t in load_suite("hw4").tests}
    for outcome in case.outcomes:
        parse_outcome(outcome)


@pytest.mark.parametrize("name", sorted(p.parent.name for p in SUBMISSIONS.glob("*/expected.toml")))
def test_each_rule_submission_says_its_verdict(name: str) -> None:
    expected = tomllib.loads((SUBMISSIONS / name / "expected.toml").read_text())
    assert expected["verdict"] in {"AC", "BK", "CE"} and expected["tests"]
    source = (SUBMISSIONS / name / "solve.py").read_bytes()
    if name == "syntax-error":
        with pytest.raises(SyntaxError):
            ast.parse(source)
    else:
        ast.parse(source)
    if name == "sdpa-hidden":  # the name never appears whole in the source
        assert b"scaled_dot_product_attention" not in source
