"""A second process by multiprocessing's spawn: the first call starts a spawned process that
runs cuBLAS matrix products on the GPU for as long as the runner lives, and waits until it is on
the GPU; solve() itself computes the answer with the honest Triton kernel
(tests/hostile/triton/honest). A test runs as one process on the GPU: BK, naming the second
process."""

import math
import multiprocessing

import torch
import triton
import triton.language as tl


@triton.jit
def attention_fwd(Q, K, V, O, N, scale, D: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr):
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
        s = tl.dot(q, k, input_precision="ieee")
        s = tl.where(keys[None, :] < N, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m - m_new)
        v = tl.load(V + base + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        l = l * alpha + tl.sum(p, 1)
        m = m_new
    tl.store(O + base + rows[:, None] * D + dims[None, :], acc / l[:, None], mask=rows[:, None] < N)


CHILD = """
import torch
a = torch.rand(2048, 2048, device="cuda")
a @ a
torch.cuda.synchronize()
ready.set()
while True:
    a @ a
    torch.cuda.synchronize()
"""
_child: list = []


def solve(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, O: torch.Tensor,
          B: int, N: int, d: int) -> None:
    if not _child:
        context = multiprocessing.get_context("spawn")
        ready = context.Event()
        process = context.Process(target=exec, args=(CHILD, {"ready": ready}), daemon=True)
        process.start()
        ready.wait(60)  # the child holds a context from here on
        _child.append(process)
    block_m = 64
    grid = (triton.cdiv(N, block_m), B)
    attention_fwd[grid](Q, K, V, O, N, 1.0 / math.sqrt(d), D=d, BLOCK_M=block_m, BLOCK_N=32,
                        num_warps=4, num_stages=2)
