"""The trivial-answer guard refuses tests that zeros or mean(V) would pass, naming them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kernels.fileformat import open_input
from kernels.reference import compute_reference
from testcases.generator import write_input
from testcases.guard import GuardError, guard_test, trivial_errors
from testcases.prepared import prepare_suite
from testcases.suite import Suite

SuiteFactory = Callable[[list[dict[str, Any]]], Suite]


def prepared_files(suite: Suite, tmp_path: Path) -> tuple[Path, Path]:
    spec = suite.tests[0]
    inp, out = tmp_path / "in.bin", tmp_path / "out.bin"
    write_input(inp, spec)
    compute_reference(inp, out, "cpu")
    return inp, out


def test_ordinary_test_passes_and_errors_are_those_of_the_trivial_outputs(
    suite_factory: SuiteFactory, tmp_path: Path
) -> None:
    inp, out = prepared_files(suite_factory([{}]), tmp_path)
    result = guard_test("u01", inp, out, 5e-3)
    expected = np.fromfile(out, dtype=np.float32).reshape(2, 40, 32)
    v = np.asarray(open_input(inp).data[:, 2])
    assert result.zeros_error == pytest.approx(np.abs(expected).max())
    mean_v = v.mean(axis=1, keepdims=True).astype(np.float32)
    assert result.mean_v_error == pytest.approx(np.abs(expected - mean_v).max())
    assert min(result.zeros_error, result.mean_v_error) > 0.1


def test_tiny_values_are_refused_because_zeros_pass(
    suite_factory: SuiteFactory, tmp_path: Path
) -> None:
    inp, out = prepared_files(suite_factory([{"scale": 0.004}]), tmp_path)
    with pytest.raises(GuardError, match="test u01 .* all-zeros output passes") as info:
        guard_test("u01", inp, out, 5e-3)
    assert info.value.answer == "all-zeros" and info.value.max_error <= 5e-3


def test_uniform_softmax_is_refused_because_mean_v_passes(
    suite_factory: SuiteFactory, tmp_path: Path
) -> None:
    inp, out = prepared_files(suite_factory([{"values": "zero-q"}]), tmp_path)
    assert trivial_errors("u01", inp, out).zeros_error > 5e-3
    with pytest.raises(GuardError, match=r"test u01 .* mean\(V\) output passes"):
        guard_test("u01", inp, out, 5e-3)


def test_prepare_refuses_the_suite_and_marks_nothing_done(
    suite_factory: SuiteFactory, tmp_path: Path
) -> None:
    suite = suite_factory([{}, {"values": "zero-q"}])
    with pytest.raises(GuardError, match="test u02"):
        prepare_suite(suite, tmp_path, device="cpu")
    assert list(tmp_path.rglob("guard-*.json")) == [next(tmp_path.rglob("u01/*/guard-*.json"))]
    with pytest.raises(GuardError, match="test u02"):
        prepare_suite(suite, tmp_path, device="cpu")
