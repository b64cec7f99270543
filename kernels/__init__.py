"""Reference FlashAttention kernels, the homework file format, and output comparison.

Imports neither the web app nor the worker."""
