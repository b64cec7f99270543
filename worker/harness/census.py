"""No borrowed attention: the kernels a submission's process ran, checked against an allow rule.

A suite with `own_kernels_only = true` (hw4) forbids reaching the answer through a library's
attention or matrix kernels (torch's scaled_dot_product_attention, flash-attn, xformers, cuBLAS and
cuDNN matmuls, CUTLASS). Looking for the call in the source is useless (getattr, importlib,
ctypes, a string built at run time), so the rule is checked on what the GPU ran: the triton-kernel
runner records every kernel of its process by name through CUPTI (torch.profiler, started before
the student's file is imported) and writes the census at the end; this module judges it.

The allow rule. A kernel may run when it is
  * a memset or memcpy;
  * one of the submission's own Triton kernels: its name is that of a function defined in the
    submitted file (a Triton kernel is named after its Python function), and not named like a
    library's kernels (LIBRARY_PREFIXES: cuBLAS, cuDNN, CUTLASS, torch's attention);
  * a kernel of torch's own element-wise, reduction, copy or softmax code (the at::, c10:: and
    cub namespaces) whose name does not say matrix or attention (TORCH_DENIED).
Anything else is borrowed, and the first such kernel names the verdict (BK).

What it does not stop: a submission that attacks the census itself in its own process (stops the
profiler, rewrites the file). That is the forger corpus's threat, and the census carries its own
evidence: our per-call L2 flush is one kernel per call that T requested, so a census short of T's
count of calls (or missing) holds the result for a TA (`census_flag`).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from worker.running.borrowed import COPIES, LIBRARY_PREFIXES

CENSUS_NAME = "census.json"  # written by the runner in its work dir
CENSUS_MAX_BYTES = 8 << 20
FLUSH_KERNELS = ("FillFunctor", "Memset")  # the runner's per-call L2 flush (a uint8 fill_: a
# fill kernel, or a memset where torch uses one); a submission's own fills only add to the count
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TORCH_NAMESPACES = ("at::", "c10::", "at_cuda_detail::", "cub::", "(anonymous namespace)::")
TORCH_DENIED = re.compile(r"gemm|gemv|matmul|bmm|attention|attn|fmha|flash|cublas|cutlass|cudnn",
                          re.IGNORECASE)


@dataclass(frozen=True)
class Census:
    """What the runner says its process ran."""

    kernels: dict[str, int]  # kernel (or memset/memcpy) name -> launches
    calls: int  # calls the runner says it served

    def flushes(self) -> int:
        """Launches of the runner's own per-call flush kernel."""
        return sum(n for name, n in self.kernels.items()
                   if any(flush in name for flush in FLUSH_KERNELS))


def read_census(path: Path) -> Census | None:
    """The census file, or None when it is missing, too large or malformed."""
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > CENSUS_MAX_BYTES:
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
        kernels = {str(k): int(v) for k, v in dict(doc["kernels"]).items()}
        return Census(kernels, int(doc["calls"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def own_functions(source: bytes) -> frozenset[str]:
    """Names of every function defined in the submitted file (its Triton kernels among them),
    read by the judge from the source it was given (empty when it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset(n.name for n in ast.walk(tree)
                     if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def _torch_own(name: str) -> bool:
    bare = name.removeprefix("void ")
    return bare.startswith(TORCH_NAMESPACES) and not TORCH_DENIED.search(bare)


def allowed(name: str, own: frozenset[str]) -> bool:
    """Whether a kernel of this name may run under the rule (see the module's docstring)."""
    if name.startswith(COPIES):
        return True
    if IDENTIFIER.fullmatch(name):
        return name in own and not LIBRARY_PREFIXES.match(name)
    return _torch_own(name)


def borrowed(kernels: Mapping[str, int], own: frozenset[str]) -> list[str]:
    """The kernels that break the rule, most launched first."""
    found = [n for n in kernels if not allowed(n, own)]
    return sorted(found, key=lambda n: (-kernels[n], n))


def census_flag(census: Census | None, requested_calls: int) -> str | None:
    """Why the census cannot be believed (a reason for the TA), or None when it can."""
    if census is None:
        return "the runner left no census of the kernels it ran"
    if census.flushes() < requested_calls:
        return (f"the census saw {census.flushes()} of the {requested_calls} calls the timer "
                "requested: the profiler was stopped or the census rewritten")
    return None
