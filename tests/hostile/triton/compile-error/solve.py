"""A Triton kernel that does not compile: it calls a function tl does not have."""

import triton
import triton.language as tl


@triton.jit
def broken(O, N):
    i = tl.arange(0, 128)
    tl.store(O + i, tl.no_such_function(i), mask=i < N)


def solve(Q, K, V, O, B, N, d):
    broken[(1,)](O, N)
