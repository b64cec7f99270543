"""Forger flush-overlap: starts its work before the clock does, on a stream of its own.

The runner flushes L2 (a fill on the default stream), records the start event behind it and calls
solve(). A kernel launched on a stream of its own does not wait for that fill: it starts while the
flush still runs, and part of it may be done before the start event. solve() then makes the
default stream wait for its stream (no patching, nothing left pending): the events are honest, so
the judge must either see no gain or not start the clock after work it cannot see.
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def attention_fwd(Q, K, V, O, N, scale, D: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr,
                  PRECISION: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, D)
    base = tl.program_id(1).to(tl.int64) * N * D
    q = tl.load(Q + base + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N, other=0.0)
    q = q * (scale * 1.4426950408889634)  # exp2 below: fold log2(e) into the scale
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    for start in range(0, N, BLOCK_N):
        keys = start + cols
        k = tl.load(K + base + keys[None, :] * D + dims[:, None], mask=keys[None, :] < N, other=0.0)
        s = tl.dot(q, k, input_precision=PRECISION)
        s = tl.where(keys[None, :] < N, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m - m_new)
        v = tl.load(V + base + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision=PRECISION)
        l = l * alpha + tl.sum(p, 1)
        m = m_new
    tl.store(O + base + rows[:, None] * D + dims[None, :], acc / l[:, None], mask=rows[:, None] < N)


def launch(Q, K, V, O, B, N, d, precision="ieee"):
    block_m = 64
    grid = (triton.cdiv(N, block_m), B)
    attention_fwd[grid](Q, K, V, O, N, 1.0 / math.sqrt(d), D=d, BLOCK_M=block_m, BLOCK_N=32,
                        PRECISION=precision, num_warps=4, num_stages=2)


SIDE = torch.cuda.Stream()


def solve(Q, K, V, O, B, N, d):
    with torch.cuda.stream(SIDE):
        launch(Q, K, V, O, B, N, d)
    torch.cuda.current_stream().wait_stream(SIDE)
