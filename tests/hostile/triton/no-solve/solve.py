import triton


def solver(Q, K, V, O, B, N, d):
    pass
