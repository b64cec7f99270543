"""Write the reference output of an input file, on the GPU where there is one, else on the CPU.

`device="auto"` uses the CUDA kernel (kernels.gpu_reference) when CuPy and a GPU are usable and
the float64 CPU reference otherwise; "gpu" refuses to fall back, so a GPU worker never silently
grades against a 100x slower path. The CPU path streams batch chunks to the output, so memory stays
bounded.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType

import numpy as np

from kernels import cpu_reference
from kernels.atomicfile import atomic_write
from kernels.fileformat import FormatError, open_input

DEVICES = ("auto", "cpu", "gpu")
GPU_DEFAULT_NAME = "cuda-flash-v1"  # used when kernels.gpu_reference does not name itself
CHUNK_ELEMENTS = 1 << 21  # output values computed and written per step on the CPU


class ReferenceError(RuntimeError):
    """The requested reference cannot run here (e.g. --device gpu without a GPU)."""


def _gpu_module() -> ModuleType | None:
    """kernels.gpu_reference when CuPy is installed and a GPU answers, else None."""
    if importlib.util.find_spec("cupy") is None:
        return None
    try:
        module = importlib.import_module("kernels.gpu_reference")
        return module if module.gpu_available() else None
    except Exception:  # a broken driver or missing module means "no GPU" for auto
        return None


def resolve_device(device: str) -> str:
    """Turn "auto" into "cpu" or "gpu"; raise ReferenceError when "gpu" is impossible."""
    if device not in DEVICES:
        raise ReferenceError(f"unknown device {device!r}: choose one of {', '.join(DEVICES)}")
    if device == "cpu":
        return "cpu"
    has_gpu = _gpu_module() is not None
    if device == "gpu" and not has_gpu:
        raise ReferenceError("device gpu requested but no usable GPU (CuPy + CUDA) was found")
    return "gpu" if has_gpu else "cpu"


def reference_name(device: str) -> str:
    """The version string of the reference `device` resolves to (a prepared-cache key part)."""
    if resolve_device(device) == "cpu":
        return cpu_reference.NAME
    module = _gpu_module()
    return str(getattr(module, "REFERENCE_VERSION", GPU_DEFAULT_NAME))


def compute_reference(
    input_path: str | os.PathLike[str], output_path: str | os.PathLike[str], device: str = "auto"
) -> str:
    """Write the reference output for a valid input file; return the reference's name."""
    if resolve_device(device) == "gpu":
        module = _gpu_module()
        assert module is not None  # resolve_device checked it
        module.reference_file(str(input_path), str(output_path))
        return reference_name("gpu")
    _cpu_reference_file(input_path, output_path)
    return cpu_reference.NAME


def _cpu_reference_file(
    input_path: str | os.PathLike[str], output_path: str | os.PathLike[str]
) -> None:
    """Stream batch chunks through the float64 reference into the output (atomically)."""
    input_file = open_input(input_path)
    with atomic_write(output_path) as out:
        for start, stop in input_file.chunks(CHUNK_ELEMENTS):
            chunk = input_file.batches(start, stop)
            if not np.isfinite(chunk).all():
                raise FormatError(
                    "values", f"batches {start}..{stop - 1} contain a NaN or infinity"
                )
            cpu_reference.reference_chunk(input_file, start, stop).tofile(out)
