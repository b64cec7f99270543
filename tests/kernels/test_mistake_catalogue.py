"""The mistake catalogue on outputs of buggy FlashAttention written the student's way (float32,
key tile by key tile: tests/kernels/buggy_flash.py), independently of its float64 formulas: each
mistake is named, with its distance; right answers and garbage are named nothing."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from kernels.cpu_reference import attention_f64
from kernels.fileformat import open_input, write_input
from kernels.mistakes.catalogue import CATALOGUE, variant
from kernels.mistakes.files import mistake_of_files
from kernels.mistakes.match import TIGHT, Mistake, name_mistake
from kernels.mistakes.sample import take_sample
from tests.kernels.buggy_flash import Bugs, flash

Output = Callable[[np.ndarray], np.ndarray]  # (B, 3, N, d) input -> (B, N, d) output


def right(qkv: np.ndarray) -> np.ndarray:
    return attention_f64(qkv[:, 0], qkv[:, 1], qkv[:, 2]).astype(np.float32)


def named(tmp_path: Path, shape: tuple[int, int, int], output: Output, reading: str = "",
          seed: int = 1) -> Mistake | None:
    B, N, d = shape
    qkv = np.random.default_rng(seed).uniform(-3, 3, (B, 3, N, d)).astype(np.float32)
    write_input(tmp_path / "in.bin", qkv[:, 0], qkv[:, 1], qkv[:, 2])
    sample = take_sample(open_input(tmp_path / "in.bin"), output(qkv), right(qkv), 5e-3)
    return name_mistake(sample, reading)


BUGS = {
    "no_scale": Bugs(scale="one"), "scale_1_over_d": Bugs(scale="inv_d"),
    "scale_sqrt_d": Bugs(scale="sqrt"), "scale_zero": Bugs(scale="zero"),
    "no_rescale@32": Bugs(rescale_o=False), "no_rescale_sum@32": Bugs(rescale_o=False,
                                                                      rescale_l=False),
    "no_rescale@64": Bugs(rescale_o=False, tile=64), "no_division": Bugs(divide=False),
    "keys_dropped": Bugs(tail="dropped"), "keys_twice": Bugs(tail="twice"),
    "keys_zero_padded@32": Bugs(tail="zeros"), "keys_clamped@32": Bugs(tail="clamped"),
}


@pytest.mark.parametrize("name", BUGS)
@pytest.mark.parametrize("shape", [(8, 100, 32), (4, 33, 64)])
def test_a_planted_mistake_is_named(tmp_path, name, shape):
    if shape[1] <= BUGS[name].tile:
        pytest.skip("one key tile: nothing to rescale, the answer is right")
    found = named(tmp_path, shape, lambda qkv: flash(qkv, BUGS[name]))
    assert found is not None
    assert found.name == name or found.name.split("@")[0] == name
    assert found.distance <= TIGHT and found.how == "all"
    assert found.line.startswith("your output equals ") and "max diff" in found.line


def test_the_line_says_what_and_how_close(tmp_path):
    found = named(tmp_path, (8, 100, 32), lambda qkv: flash(qkv, Bugs(scale="one")))
    assert found is not None and found.line.startswith(
        "your output equals attention without the 1/sqrt(d) scale (max diff ")
    assert found.line.endswith(" on batches 0-3)") and found.distance < 1e-4


def test_the_tail_sentences_name_the_keys_and_rows(tmp_path):
    dropped = named(tmp_path, (8, 100, 32), lambda qkv: flash(qkv, Bugs(tail="dropped")))
    assert dropped is not None and "without keys 96-99" in dropped.line

    def unwritten(qkv: np.ndarray) -> np.ndarray:
        out = right(qkv)
        out[:, 96:] = 0.0
        return out
    rows = named(tmp_path, (8, 100, 32), unwritten)
    assert rows is not None and rows.name.startswith("rows_unwritten@")
    assert "rows 96-99 left as zeros" in rows.line


LAYOUTS: dict[str, Output] = {
    "planar_input": lambda qkv: right(qkv.reshape(3, qkv.shape[0], *qkv.shape[2:])
                                      .transpose(1, 0, 2, 3)),
    "batch_stride_nd": lambda qkv: right(np.stack([qkv.reshape(-1, *qkv.shape[2:])[b:b + 3]
                                                   for b in range(qkv.shape[0])])),
    "b_n_swapped": lambda qkv: right(qkv.reshape(qkv.shape[2], 3, qkv.shape[0], qkv.shape[3])
                                     ).reshape(qkv.shape[0], qkv.shape[2], -1),
    "o_transposed": lambda qkv: np.ascontiguousarray(right(qkv).transpose(0, 2, 1))
    .reshape(qkv.shape[0], qkv.shape[2], -1),
    "previous_batch": lambda qkv: np.concatenate([np.zeros_like(right(qkv)[:1]),
                                                  right(qkv)[:-1]]),
    "batch_zero_everywhere": lambda qkv: np.broadcast_to(right(qkv)[:1], right(qkv).shape)
    .copy(),
    "qk_swapped": lambda qkv: right(qkv[:, [1, 0, 2]]),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_a_layout_mistake_is_named_by_index_mapping(tmp_path, name):
    found = named(tmp_path, (8, 100, 32), LAYOUTS[name])
    assert found is not None and found.name == name


def test_overflow_without_scale_and_max_gives_the_same_nan_rows(tmp_path):
    found = named(tmp_path, (1, 2048, 64), lambda qkv: flash(qkv, Bugs(scale="one",
                                                                      max_sub=False)))
    assert found is not None and found.name == "no_max_no_scale"
    assert "NaN in the same" in found.line


def test_forgetting_only_the_max_is_right_here(tmp_path):
    """Scores are at most 9 sqrt(d) = 72 < 88.7: float32 exp never overflows, nothing is wrong."""
    found = named(tmp_path, (2, 1000, 64), lambda qkv: flash(qkv, Bugs(max_sub=False)))
    assert found is None


def test_half_precision_is_recognised_by_the_size_of_its_errors(tmp_path):
    found = named(tmp_path, (3, 1000, 32), lambda qkv: flash(qkv, Bugs(half=True)))
    assert found is not None and found.name == "half_accumulation" and found.how == "errors"
    assert found.line.startswith("your output looks like attention accumulated in half")


def test_wrong_rows_only_are_matched_there_with_the_reading(tmp_path):
    def some_rows(qkv: np.ndarray) -> np.ndarray:
        out = right(qkv)
        out[:, 64:] = flash(qkv, Bugs(rescale_o=False))[:, 64:]
        return out
    found = named(tmp_path, (8, 100, 32), some_rows, reading="errors only in rows 64-99")
    assert found is not None and found.name == "no_rescale@32" and found.how == "wrong"
    assert found.line.startswith("errors only in rows 64-99; there it equals the online "
                                 "softmax that never rescales")


@pytest.mark.parametrize("output", [right, lambda qkv: np.random.default_rng(5).uniform(
    -3, 3, right(qkv).shape).astype(np.float32), lambda qkv: right(qkv) + 0.5],
    ids=["correct", "garbage", "offset"])
def test_right_answers_and_unknown_mistakes_are_named_nothing(tmp_path, output):
    assert named(tmp_path, (8, 100, 32), output) is None


def test_files_and_dict_round_trip(tmp_path):
    qkv = np.random.default_rng(2).uniform(-3, 3, (4, 3, 64, 32)).astype(np.float32)
    write_input(tmp_path / "in.bin", qkv[:, 0], qkv[:, 1], qkv[:, 2])
    right(qkv).tofile(tmp_path / "want.bin")
    flash(qkv, Bugs(scale="inv_d")).tofile(tmp_path / "got.bin")
    found = mistake_of_files(tmp_path / "in.bin", tmp_path / "got.bin", tmp_path / "want.bin")
    assert found is not None and Mistake.from_dict(found.to_dict()) == found
    assert mistake_of_files(tmp_path / "in.bin", tmp_path / "want.bin",
                            tmp_path / "want.bin") is None


def test_the_registry_has_unique_names_and_finds_them():
    names = [v.name for v in CATALOGUE]
    assert len(names) == len(set(names))
    assert variant("no_scale").sentence == "attention without the 1/sqrt(d) scale"


def test_a_big_test_samples_rows_and_stays_cheap(tmp_path):
    """N = 4096: a row subset, half of it wrong rows; the CPU time is the bench's to report
    (bench/mistake_catalogue.py), this only checks the sample stays small."""
    start = time.process_time()
    found = named(tmp_path, (2, 4096, 32), lambda qkv: flash(qkv, Bugs(scale="inv_d")))
    assert found is not None and found.name == "scale_1_over_d"
    assert "rows of batches 0-1" in found.compared
    assert time.process_time() - start < 60  # a guard against a runaway, not a timing
