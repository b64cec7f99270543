"""The trivial-answer guard: an all-zeros output and a mean(V) output must both fail every test.

If a test's softmax is nearly uniform (tiny or constant inputs) or its values tiny, a program that
writes zeros, or the column means of V, would pass without computing attention. Such a test is
worthless, so preparing its suite is refused. The errors are computed streaming, batch chunk by
batch chunk, from the input's V and the expected output: no trivial output file is ever written.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from kernels.fileformat import open_input, read_output

CHUNK_ELEMENTS = 1 << 21


class GuardError(ValueError):
    """A test that a trivial answer passes; the message names the test and the answer."""

    def __init__(self, test_id: str, answer: str, max_error: float, tolerance: float) -> None:
        super().__init__(
            f"test {test_id} is refused: the trivial {answer} output passes it "
            f"(max error {max_error:.3g} <= tolerance {tolerance:g}); "
            "its inputs do not make attention matter"
        )
        self.test_id = test_id  # the refused test
        self.answer = answer  # "all-zeros" or "mean(V)"
        self.max_error = max_error  # that answer's max abs error against the expected output


@dataclass(frozen=True)
class GuardResult:
    """How badly the trivial answers fail one test (both must exceed the tolerance)."""

    test_id: str  # the test checked
    zeros_error: float  # max |0 - expected|
    mean_v_error: float  # max |mean(V) - expected|, mean over each batch's rows

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def trivial_errors(
    test_id: str, input_path: str | os.PathLike[str], expected_path: str | os.PathLike[str]
) -> GuardResult:
    """Max errors of the all-zeros and mean(V) outputs, streamed over batch chunks."""
    input_file = open_input(input_path)
    expected = read_output(expected_path, input_file.header)
    zeros = mean_v = 0.0
    for start, stop in input_file.chunks(CHUNK_ELEMENTS):
        want = np.asarray(expected[start:stop])
        v = input_file.batches(start, stop)[:, 2]
        means = v.mean(axis=1, dtype=np.float64, keepdims=True).astype(np.float32)
        zeros = max(zeros, _max_abs(want))
        mean_v = max(mean_v, _max_abs(want - means))
    return GuardResult(test_id, zeros, mean_v)


def _max_abs(x: np.ndarray) -> float:
    """Max |x|, infinite when x holds a NaN (a NaN output can never pass)."""
    worst = float(np.abs(x).max())
    return worst if worst == worst else float("inf")


def check_trivial(result: GuardResult, tolerance: float) -> None:
    """Raise GuardError if either trivial answer would pass within `tolerance`."""
    if result.zeros_error <= tolerance:
        raise GuardError(result.test_id, "all-zeros", result.zeros_error, tolerance)
    if result.mean_v_error <= tolerance:
        raise GuardError(result.test_id, "mean(V)", result.mean_v_error, tolerance)


def guard_test(
    test_id: str,
    input_path: str | os.PathLike[str],
    expected_path: str | os.PathLike[str],
    tolerance: float,
) -> GuardResult:
    """Compute the trivial answers' errors and refuse the test when one passes."""
    result = trivial_errors(test_id, input_path, expected_path)
    check_trivial(result, tolerance)
    return result
