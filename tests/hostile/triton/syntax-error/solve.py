import triton


def solve(Q, K, V, O, B, N, d:
    pass
