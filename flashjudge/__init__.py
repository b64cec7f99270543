"""flashjudge: a judge for the FlashAttention homework."""
