"""A second process on the GPU: the first call starts a child Python that works on the GPU
(attention through torch's library kernel, over and over) for as long as the runner lives, while
solve() itself computes the answer honestly. Whatever the child computes, a test runs as one
process on the GPU: BK, naming the second process."""

import subprocess
import sys

import torch

CHILD = """
import torch, torch.nn.functional as F
q = torch.rand(8, 1, 256, 64, device="cuda")
while True:
    F.scaled_dot_product_attention(q, q, q)
    torch.cuda.synchronize()
"""
_child = []


def solve(Q, K, V, O, B, N, d):
    if not _child:
        _child.append(subprocess.Popen([sys.executable, "-c", CHILD]))
    scores = torch.einsum("bnd,bmd->bnm", Q, K) / d ** 0.5
    O.copy_(torch.einsum("bnm,bmd->bnd", torch.softmax(scores, -1), V))
