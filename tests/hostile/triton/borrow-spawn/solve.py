"""A second process by multiprocessing's spawn: the first call starts a spawned process that runs
cuBLAS matrix products on the GPU while solve() computes. A test runs as one process on the GPU:
BK, naming the second process."""

import multiprocessing

import torch

CHILD = """
import torch
a = torch.rand(2048, 2048, device="cuda")
while True:
    a @ a
    torch.cuda.synchronize()
"""
_child = []


def solve(Q, K, V, O, B, N, d):
    if not _child:
        process = multiprocessing.get_context("spawn").Process(target=exec, args=(CHILD,),
                                                               daemon=True)
        process.start()
        _child.append(process)
    scores = torch.einsum("bnd,bmd->bnm", Q, K) / d ** 0.5
    O.copy_(torch.einsum("bnm,bmd->bnd", torch.softmax(scores, -1), V))
