"""Borrowed attention, openly: torch's scaled_dot_product_attention inside solve()."""

import torch
import torch.nn.functional as F


def solve(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, O: torch.Tensor,
          B: int, N: int, d: int) -> None:
    O.copy_(F.scaled_dot_product_attention(Q[:, None], K[:, None], V[:, None])[:, 0])
