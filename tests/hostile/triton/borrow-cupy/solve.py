"""cuBLAS through a Python extension other than torch: the scores and the weighted sum are CuPy
matrix products (cuBLAS), the tensors shared with torch through DLPack. The kernels the GPU ran
in the runner's process name the library: BK."""

import cupy
import torch


def solve(Q, K, V, O, B, N, d):
    q, k, v = (cupy.from_dlpack(t) for t in (Q, K, V))
    scores = cupy.matmul(q, k.transpose(0, 2, 1)) / d ** 0.5
    scores = cupy.exp(scores - scores.max(axis=-1, keepdims=True))
    scores /= scores.sum(axis=-1, keepdims=True)
    O.copy_(torch.from_dlpack(cupy.matmul(scores, v)))
