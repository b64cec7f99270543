"""No borrowed attention for the CUDA languages, at build time: a built program or library that
carries a cuBLAS or cuDNN library name (linked, or named for dlopen) or CUTLASS's attention kernel
compiled in is refused (BK) where the suite forbids borrowed kernels (hw4).

Weaker than triton-kernel's census (worker/harness/census.py), which sees the kernels the GPU ran:
this reads the built file only, so a library name assembled at run time and dlopen'ed is not seen.
What it does see: `-lcublas`/`-lcudnn` in a Makefile (the name in the dynamic section), a constant
`dlopen("libcublas.so.13")`, and CUTLASS's fused attention (`AttentionKernel`, `fmha`) instantiated
from its headers. A runtime census for these languages (a CUPTI library injected into the runner)
is the next step; it needs a GPU to be tried.
"""

from __future__ import annotations

import re
from pathlib import Path

LIBRARIES = re.compile(rb"lib(cublasLt|cublas|cudnn[A-Za-z_]*)\.so")
LIBRARY_NAMES = {b"cublas": "cuBLAS", b"cublasLt": "cuBLASLt"}
CUTLASS_ATTENTION = (b"AttentionKernel", b"fmha")
MAX_BYTES = 512 << 20


def borrowed_in_binary(product: Path) -> str | None:
    """Why this built file breaks the rule (the library or kernel named), or None."""
    try:
        data = product.read_bytes()[:MAX_BYTES]
    except OSError:
        return None
    found = LIBRARIES.search(data)
    if found is not None:
        name = LIBRARY_NAMES.get(found.group(1), "cuDNN")
        return f"{product.name} uses {name} ({found.group(0).decode()})"
    if b"cutlass" in data:
        for marker in CUTLASS_ATTENTION:
            if marker in data:
                return f"{product.name} compiles CUTLASS's attention kernel ({marker.decode()})"
    return None
