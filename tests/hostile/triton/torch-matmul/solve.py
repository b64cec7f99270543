"""Borrowed matrix kernels: attention written with torch's matmul (cuBLAS) and softmax."""

import math

import torch


def solve(Q, K, V, O, B, N, d):
    scores = torch.matmul(Q, K.transpose(1, 2)) * (1.0 / math.sqrt(d))
    O.copy_(torch.matmul(torch.softmax(scores, dim=-1), V))
