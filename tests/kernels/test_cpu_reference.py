"""The float64 reference equals the direct formula whatever the chunking; it streams to files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernels.cpu_reference import NAME, attention_f64
from kernels.fileformat import FormatError, write_input
from kernels.reference import ReferenceError, compute_reference, resolve_device


def naive(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(Q K^T / sqrt(d)) V, one batch, float64, exactly as the spec writes it."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    scores = q @ k.T / np.sqrt(q.shape[1])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)) @ v


def random_qkv(B: int, N: int, d: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-3, 3, (B, N, d)).astype(np.float32) for _ in range(3))


@pytest.mark.parametrize(
    ("B", "N", "d", "budget"),
    [
        (3, 33, 32, 1 << 22),  # many batches at once
        (2, 100, 64, 1 << 22),
        (3, 70, 32, 5000),  # one batch at a time, 71-row blocks
        (2, 257, 64, 1000),  # 3-row blocks with a tail
        (1, 1, 32, 1 << 22),  # N = 1: the output is V
    ],
)
def test_matches_the_direct_formula(B: int, N: int, d: int, budget: int) -> None:
    q, k, v = random_qkv(B, N, d)
    got = attention_f64(q, k, v, budget=budget)
    want = np.stack([naive(q[b], k[b], v[b]) for b in range(B)])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_a_single_batch_can_be_given_as_2d() -> None:
    q, k, v = random_qkv(1, 50, 32, seed=3)
    np.testing.assert_allclose(attention_f64(q[0], k[0], v[0]), naive(q[0], k[0], v[0]), atol=1e-12)


def test_reference_file_holds_every_batch_in_order(tmp_path: Path) -> None:
    q, k, v = random_qkv(5, 40, 64, seed=1)
    write_input(tmp_path / "in.bin", q, k, v)
    assert compute_reference(tmp_path / "in.bin", tmp_path / "out.bin", "cpu") == NAME
    got = np.fromfile(tmp_path / "out.bin", dtype="<f4").reshape(5, 40, 64)
    want = np.stack([naive(q[b], k[b], v[b]) for b in range(5)]).astype(np.float32)
    np.testing.assert_array_equal(got, want)


def test_non_finite_input_is_refused_and_no_output_appears(tmp_path: Path) -> None:
    q, k, v = random_qkv(2, 8, 32)
    k[1, 0, 0] = np.nan
    write_input(tmp_path / "in.bin", q, k, v)
    with pytest.raises(FormatError, match="NaN") as info:
        compute_reference(tmp_path / "in.bin", tmp_path / "out.bin", "cpu")
    assert info.value.field == "values"
    assert not (tmp_path / "out.bin").exists()


def test_unknown_device_is_refused() -> None:
    with pytest.raises(ReferenceError, match="auto, cpu, gpu"):
        resolve_device("tpu")


def test_gpu_device_without_a_gpu_is_refused() -> None:
    if resolve_device("auto") == "gpu":
        pytest.skip("this machine has a GPU")
    with pytest.raises(ReferenceError, match="no usable GPU"):
        resolve_device("gpu")
