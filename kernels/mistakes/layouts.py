"""The mistakes in where values are read or written, found by index mapping: Q, K, V read
planar (all Qs, then all Ks, then all Vs), a batch stride of N*d instead of 3*N*d, the header's
B and N swapped, O written transposed, a batch holding the previous batch's output, or batch
0's answer in every batch. Each predicts the student's values from the input file or from the
right answers of other batches, which the expected file already holds."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kernels.mistakes.sample import Sample
from kernels.mistakes.softmax import Prediction, Variant, attend

MAX_GROUPS = 64  # distinct reinterpreted batches computed (B and N swapped); the rest left open


def block(sample: Sample, g: int) -> np.ndarray:
    """The input's g-th N x d block (block 3b is Q of batch b, 3b+1 its K, 3b+2 its V)."""
    return np.asarray(sample.inp.data[g // 3, g % 3], dtype=np.float64)


def reading_blocks(which: Callable[[int, int], tuple[int, int, int]]
                   ) -> Callable[[Sample], Prediction | None]:
    """Attention of each sampled batch b on the blocks which(b, B) read as its Q, K, V."""
    def predict(sample: Sample) -> Prediction | None:
        B = sample.header.B
        out = []
        for b in sample.batches:
            q, k, v = (block(sample, g) for g in which(int(b), B))
            out.append(attend(q[sample.rows] @ k.T * sample.scale, v))
        return Prediction(np.stack(out))
    return predict


def planar(b: int, B: int) -> tuple[int, int, int]:
    return b, B + b, 2 * B + b


def stride_nd(b: int, B: int) -> tuple[int, int, int]:
    return b, b + 1, b + 2


def b_n_swapped(sample: Sample) -> Prediction | None:
    """The header read as (N, B, d): N batches of B rows, Q, K, V of B*d values each in turn.
    The sampled output rows are mapped to that reading's batch and row."""
    B, N, d = sample.header.B, sample.header.N, sample.header.d
    if B == N:
        return None
    flat = np.asarray(sample.inp.data).reshape(-1)
    rows = (sample.batches[:, None] * N + sample.rows[None, :]).reshape(-1)
    theirs, their_row = rows // B, rows % B
    values = np.full((len(rows), d), np.nan)
    unsure = np.ones((len(rows), d), bool)
    for g in np.unique(theirs)[:MAX_GROUPS]:
        q, k, v = (np.asarray(flat[(3 * g + i) * B * d:(3 * g + i + 1) * B * d], np.float64)
                   .reshape(B, d) for i in range(3))
        mine = theirs == g
        values[mine] = attend(q[their_row[mine]] @ k.T * sample.scale, v)
        unsure[mine] = False
    shape = sample.got.shape
    return Prediction(values.reshape(shape), unsure.reshape(shape))


def transposed(sample: Sample) -> Prediction:
    """Each batch's right answer written as d x N (O[i][c] at c*N + i)."""
    N, d = sample.header.N, sample.header.d
    b = sample.batches
    want = np.asarray(sample.expected[b[0]:b[-1] + 1], np.float64)
    return Prediction(want.transpose(0, 2, 1).reshape(len(b), N, d)[:, sample.rows])


def shifted(to_batch: Callable[[int], int]) -> Callable[[Sample], Prediction | None]:
    """The right answer of batch to_batch(b) in batch b (a negative index: left open)."""
    def predict(sample: Sample) -> Prediction | None:
        sources = [to_batch(int(b)) for b in sample.batches]
        if all(s < 0 or s == b for s, b in zip(sources, sample.batches, strict=True)):
            return None
        values = np.stack([np.asarray(sample.expected[max(s, 0)][sample.rows], np.float64)
                           for s in sources])
        unsure = np.zeros(values.shape, bool)
        unsure[[s < 0 for s in sources]] = True
        return Prediction(values, unsure)
    return predict


LAYOUTS = (
    Variant("planar_input", "attention on Q, K, V read as all B Qs, then all Ks, then all Vs "
            "(the file holds Q, K, V of batch 0, then of batch 1...)", reading_blocks(planar)),
    Variant("batch_stride_nd", "attention with a batch stride of N*d instead of 3*N*d in the "
            "input (batch b reads its Q at b*N*d)", reading_blocks(stride_nd)),
    Variant("b_n_swapped", "attention with the header's B and N swapped (N batches of B rows)",
            b_n_swapped),
    Variant("o_transposed", "the right answer written transposed (each batch's O stored as "
            "d x N)", transposed),
    Variant("previous_batch", "the previous batch's right answer (batch b holds batch b-1's "
            "output: a buffer copied before its batch was computed, or an index off by one)",
            shifted(lambda b: b - 1)),
    Variant("batch_zero_everywhere", "batch 0's right answer in every batch (the batch offset "
            "is missing where Q, K, V are read)", shifted(lambda b: 0)),
)
