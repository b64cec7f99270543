"""A second process on the GPU: the first call starts a child Python that works on the GPU
(attention through torch's library kernel, over and over) for as long as the runner lives, and
waits until the child is on the GPU; solve() itself computes the answer with the honest Triton
kernel (tests/hostile/triton/honest). Whatever the child computes, a test runs as one process on
the GPU: BK, naming the second process."""

import math
import subprocess
import sys

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
import torch, torch.nn.functional as F
q = torch.rand(8, 1, 256, 64, device="cuda")
F.scaled_dot_product_attention(q, q, q)
torch.cuda.synchronize()
print("on the GPU", flush=True)
while True:
    F.scaled_dot_product_attention(q, q, q)
    torch.cuda.synchronize()
"""
_child: list[subprocess.Popen] = []


def solve(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, O: torch.Tensor,
          B: int, N: int, d: int) -> None:
    if not _child:
        _child.append(subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE))
        _child[0].stdout.readline()  # the child holds a context from here on
    block_m = 64
    grid = (triton.cdiv(N, block_m), B)
    attention_fwd[grid](Q, K, V, O, N, 1.0 / math.sqrt(d), D=d, BLOCK_M=block_m, BLOCK_N=32,
                        num_warps=4, num_stages=2)
