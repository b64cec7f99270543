"""No borrowed attention for the CUDA languages at run time: what one test's run did on the GPU,
judged from outside its process.

Two facts come with every GPU run (worker/sandbox/gpu/gpu_run.py): the processes of the run NVML saw
holding a context on the worker's GPU, and the census each process's CUDA injection wrote (the
kernels it ran, by name). The rules, in order:

1. One GPU process per test. Any process of the run on the GPU other than the program the judge
   started is BK ("a second process used the GPU: python3, pid in sandbox 7"), on every language:
   borrowed attention is attention computed anywhere but in the submission's own process.
2. Where the suite forbids borrowed kernels (`own_kernels_only`), the program's census must be
   there: a process that used the GPU and left none (the injection unset and the program
   re-executed, its CUPTI taken over, the driver called around it) is held for a TA, never AC.
3. Every kernel in it is a copy or memset, or was compiled from the submission (its name is in
   the built program or library, or in the judge's own runner) and is not named like a library's
   (LIBRARY_PREFIXES, read in each part of a mangled name; triton-kernel's census in
   worker/harness/census.py reads the same names). A kernel
   from anywhere else (a library opened by a name built at run time, an image loaded through the
   driver, another language's runtime) is BK and named.

A census is a claim of the submission's own process; rule 1 and NVML are not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flashjudge.contract import TestResult, Verdict
from worker.sandbox.types import GpuRunReport

RULE_DOC = "docs/homework.md#borrowed-kernels"
COPIES = ("Memset", "Memcpy")  # CUPTI's names of memsets and copies
LIBRARY_PREFIXES = re.compile(  # library kernels named as plain identifiers
    r"(sm\d{2,3}_|nvjet|cublas|cudnn|cutlass|xmma|ampere_|volta_|turing_|hopper_|maxwell_|"
    r"blackwell_|fmha|flash_fwd|flash_bwd|gemv2|gemmSN|gemmk1|splitKreduce)", re.IGNORECASE)
NAMES = re.compile(rb"[A-Za-z_][A-Za-z0-9_$.]{2,}")
MAX_SCAN = 256 << 20  # bytes of a built file read for the names it carries
LIBRARY_WORDS = re.compile(r"^(cublas\w*|cublasLt|cudnn\w*|cutlass|fmha|flash_attn|xformers)$",
                           re.IGNORECASE)


@dataclass(frozen=True)
class CensusFinding:
    """What the run's GPU facts say against the submission."""

    borrowed: bool  # BK: the message names the process or the kernel
    held: bool  # the census is missing or short: held for a TA, never AC
    message: str  # in words, for the student and the TA


def compiled_names(files: Iterable[Path]) -> frozenset[str]:
    """Every identifier-like string the built files carry: a kernel compiled into one of them is
    registered by its (mangled) name, which is among these."""
    names: set[str] = set()
    for path in files:
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_SCAN)
        except OSError:
            continue
        names.update(m.group(0).decode("ascii", "replace") for m in NAMES.finditer(data))
    return frozenset(names)


def name_parts(name: str) -> list[str]:
    """The identifiers inside an Itanium-mangled name (`_ZN7cutlass6KernelI...` gives cutlass,
    Kernel, ...); a plain name is its own only part."""
    if not name.startswith("_Z"):
        return [name]
    parts, i = [], 2
    while i < len(name):
        if name[i] == "L":  # a literal (template argument 32 is Li32E): no identifier inside
            end = name.find("E", i)
            i = end + 1 if end > 0 else len(name)
        elif name[i].isdigit():
            j = i
            while j < len(name) and name[j].isdigit():
                j += 1
            length = int(name[i:j])
            parts.append(name[j:j + length])
            i = j + length
        else:
            i += 1
    return [p for p in parts if p]


def library_named(name: str) -> bool:
    """Named like a library's kernel (cuBLAS, cuDNN, CUTLASS, the attention libraries)."""
    return any(LIBRARY_PREFIXES.match(p) or LIBRARY_WORDS.match(p) for p in name_parts(name))


def borrowed_kernels(kernels: Mapping[str, int], compiled: frozenset[str]) -> list[str]:
    """The kernels that break rule 3, most launched first."""
    found = [n for n in kernels if not n.startswith(COPIES)
             and (library_named(n) or n not in compiled)]
    return sorted(found, key=lambda n: (-kernels[n], n))


def judge_gpu_run(gpu: GpuRunReport, compiled: frozenset[str] | None) -> CensusFinding | None:
    """The finding against one run, or None. `compiled`: the names of what the submission
    built (None: the suite allows borrowed kernels, and only rule 1 applies)."""
    others = gpu.others()
    if others:
        return CensusFinding(True, False, f"a second process used the GPU: {others[0].command}, "
                             f"pid in sandbox {others[0].sandbox_pid}; a test runs as one process "
                             f"on the GPU ({RULE_DOC})")
    if compiled is None or not gpu.injected:
        return None
    censuses = [c for c in gpu.census if _pid(c) == gpu.program_pid]
    strangers = [c for c in gpu.census if _pid(c) != gpu.program_pid]
    if strangers:
        return CensusFinding(True, False, "a second process ran CUDA kernels, pid in sandbox "
                             f"{_pid(strangers[0])}; a test runs as one process ({RULE_DOC})")
    if not censuses:
        if any(p.sandbox_pid == gpu.program_pid for p in gpu.processes):
            return CensusFinding(False, True, "the program used the GPU and left no census of "
                                 "its kernels (the judge's CUDA injection was removed or "
                                 "defeated): whether a library's kernels ran is unknown")
        return None
    kernels = _kernels(censuses[0])
    found = borrowed_kernels(kernels, compiled)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return CensusFinding(True, False, f"a kernel your submission did not compile ran on the "
                             f"GPU: {found[0]}{more}; this suite accepts only your own kernels "
                             f"({RULE_DOC})")
    return None


def apply_finding(result: TestResult, finding: CensusFinding | None) -> TestResult:
    """The test's result with the finding on it: BK over any other verdict, or a holding flag
    (the result stays what it was, kept off the ranking until a TA looks)."""
    if finding is None:
        return result
    if finding.borrowed:
        result.verdict, result.message = Verdict.BK, finding.message
    else:
        result.timing_flags.append({"code": "census", "reason": finding.message, "holds": True})
    return result


def _pid(census: Mapping[str, Any]) -> int | None:
    pid = census.get("pid")
    return pid if isinstance(pid, int) else None


def _kernels(census: Mapping[str, Any]) -> dict[str, int]:
    raw = census.get("kernels")
    if not isinstance(raw, dict):
        return {}
    return {str(k): int(v) for k, v in raw.items() if isinstance(v, int)}
