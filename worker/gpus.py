"""The GPUs of this node by identity: which ones the judge may use, and how a worker is pinned.

A worker pinned with CUDA_VISIBLE_DEVICES=<index> reaches the index-th GPU in CUDA's own order
(fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID), while nvidia-smi, NVML and /dev/nvidiaN
count differently (PCI order, the driver's minor number). On a node with mixed GPUs a run could
then be labelled with another GPU's model (so the wrong limits and board) and the sandbox could
bind another GPU's device node. So a worker is pinned by the GPU's UUID, which every layer reads
the same; the worker process finds that UUID among the node's GPUs once where it starts
(`handed_gpu`, called by worker/settings.py) and hands the answer down as `Machine.gpu`: its
model, compute capability (what nvcc builds for), device minor (the node the sandbox binds).

The operator chooses the GPUs: `--gpus all|none|0,2|GPU-<uuid>,...`, and an operator's
CUDA_VISIBLE_DEVICES (indices in nvidia-smi's order, or UUIDs) limits `all` to those GPUs, so a
node shared with other work gives the judge only what it was given.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from worker.machine import Gpu

__all__ = ["Gpu", "GpuSelectionError", "choose", "handed_gpu", "list_gpus", "node_gpus",
           "smi_gpus"]


class GpuSelectionError(ValueError):
    """An operator's GPU choice that names no GPU of this node (message fit to print)."""


class Nvml(Protocol):
    """The part of pynvml this module calls (pynvml itself, or recorded answers in tests)."""

    def nvmlInit(self) -> None: ...
    def nvmlShutdown(self) -> None: ...
    def nvmlDeviceGetCount(self) -> int: ...
    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any: ...
    def nvmlDeviceGetUUID(self, handle: Any) -> str | bytes: ...
    def nvmlDeviceGetName(self, handle: Any) -> str | bytes: ...
    def nvmlDeviceGetMinorNumber(self, handle: Any) -> int: ...
    def nvmlDeviceGetPciInfo(self, handle: Any) -> Any: ...
    def nvmlDeviceGetCudaComputeCapability(self, handle: Any) -> tuple[int, int]: ...
    def nvmlDeviceGetAttributes(self, handle: Any) -> Any: ...
    def nvmlSystemGetDriverVersion(self) -> str | bytes: ...


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def list_gpus(nvml: Nvml) -> list[Gpu]:
    """Every GPU NVML sees, in its (PCI) order."""
    nvml.nvmlInit()
    try:
        driver = _text(_optional(nvml.nvmlSystemGetDriverVersion) or "")
        return [_gpu(nvml, index, nvml.nvmlDeviceGetHandleByIndex(index), driver)
                for index in range(nvml.nvmlDeviceGetCount())]
    finally:
        nvml.nvmlShutdown()


def _gpu(nvml: Nvml, index: int, handle: Any, driver: str) -> Gpu:
    capability = _optional(nvml.nvmlDeviceGetCudaComputeCapability, handle)
    attributes = _optional(nvml.nvmlDeviceGetAttributes, handle)  # documented for MIG only
    return Gpu(index=index, uuid=_text(nvml.nvmlDeviceGetUUID(handle)),
               name=_text(nvml.nvmlDeviceGetName(handle)),
               minor=int(nvml.nvmlDeviceGetMinorNumber(handle)),
               pci_bus_id=_text(nvml.nvmlDeviceGetPciInfo(handle).busId),
               compute_cap=f"{capability[0]}{capability[1]}" if capability else None,
               sm_count=getattr(attributes, "multiprocessorCount", None) or None,
               driver=driver)


def _optional(read: Any, *args: Any) -> Any:
    """An answer this driver may not give (an older one, a GPU it does not support): None then."""
    try:
        return read(*args)
    except Exception:  # noqa: BLE001 - NVMLError (not supported) or a missing function
        return None


def _pick(gpus: list[Gpu], token: str, source: str) -> Gpu:
    """One GPU by index (nvidia-smi's) or UUID (a unique prefix is enough)."""
    if token.isdigit():
        match = [g for g in gpus if g.index == int(token)]
    else:
        match = [g for g in gpus if g.uuid.startswith(token)]
    if len(match) != 1:
        known = ", ".join(f"{g.index} ({g.uuid})" for g in gpus) or "none"
        raise GpuSelectionError(f"{source} names {token!r}, which is no single GPU of this node "
                                f"(GPUs: {known})")
    return match[0]


def _tokens(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def choose(gpus: list[Gpu], spec: str, visible: str | None = None) -> list[Gpu]:
    """The GPUs to judge on: `spec` is 'all', 'none', or indices/UUIDs; `visible` is the
    operator's CUDA_VISIBLE_DEVICES (None: unset), which `all` respects and an explicit list
    must stay inside."""
    if spec.strip() == "none" or visible is not None and not _tokens(visible):
        return []
    allowed = gpus if visible is None else [_pick(gpus, t, "CUDA_VISIBLE_DEVICES")
                                            for t in _tokens(visible)]
    if spec.strip() == "all":
        return allowed
    chosen = [_pick(gpus, t, "--gpus") for t in _tokens(spec)]
    outside = [g for g in chosen if g not in allowed]
    if outside:
        raise GpuSelectionError(f"--gpus names {outside[0].label()}, outside "
                                f"CUDA_VISIBLE_DEVICES={visible}")
    return list(dict.fromkeys(chosen))


def node_gpus(load: Callable[[], Nvml] | None = None) -> list[Gpu]:
    """This node's GPUs through NVML; where the nvidia-ml-py package is missing (a node installed
    without the gpu extra), through nvidia-smi; [] without a driver: the CPU track."""
    try:
        nvml = load() if load else _load_pynvml()
    except ImportError:
        return smi_gpus()
    try:
        return list_gpus(nvml)
    except Exception:  # NVML present, no driver or no GPU
        return []


SMI_FIELDS = "index,uuid,name,pci.bus_id"
SMI_QUERY = ["nvidia-smi", f"--query-gpu={SMI_FIELDS},compute_cap,driver_version",
             "--format=csv,noheader"]
SMI_OLD_QUERY = ["nvidia-smi", f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader"]  # drivers
# that know no compute_cap refuse the whole query


def smi_gpus(run: Callable[[list[str]], str] | None = None) -> list[Gpu]:
    """The same list from nvidia-smi (no minor numbers: the sandbox resolves the UUID); `run`
    answers a query (default: nvidia-smi itself, "" where it is missing or fails)."""
    run = run or _smi
    found = [parse_smi_line(line) for line in run(SMI_QUERY).splitlines() if line.count(",") >= 5]
    return found or [parse_smi_line(line, extras=False)
                     for line in run(SMI_OLD_QUERY).splitlines() if line.count(",") >= 3]


def _smi(argv: list[str]) -> str:
    if shutil.which(argv[0]) is None:
        return ""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def parse_smi_line(line: str, extras: bool = True) -> Gpu:
    """One line of SMI_QUERY's answer (SMI_OLD_QUERY's without `extras`); a model's name may
    hold commas."""
    parts = [part.strip() for part in line.split(",")]
    capability, driver = parts[-2:] if extras else ("", "")
    index, uuid, *name, bus = parts[:-2] if extras else parts
    return Gpu(index=int(index), uuid=uuid, name=", ".join(name), minor=None, pci_bus_id=bus,
               compute_cap=parse_compute_cap(capability), driver=driver)


def parse_compute_cap(text: str) -> str | None:
    """"9.0" (nvidia-smi's compute_cap) -> "90"; None for anything else."""
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", text)
    return f"{match.group(1)}{match.group(2)}" if match else None


def handed_gpu(visible: str | None, gpus: Sequence[Gpu]) -> Gpu | None:
    """The GPU a worker process was handed, among the node's `gpus`: the first entry of its
    CUDA_VISIBLE_DEVICES (`visible`; None: unset, so the first GPU), a UUID (prefix) as
    `flashjudge worker` pins it, or an index taken as NVML's (nvidia-smi's number; CUDA's own
    order may differ on a mixed node, which is why workers are pinned by UUID). None where it
    names no GPU of this node (CUDA_VISIBLE_DEVICES="": none)."""
    token = "0" if visible is None else visible.split(",")[0].strip()
    if not token:
        return None
    if token.isdigit():
        return next((g for g in gpus if g.index == int(token)), None)
    found = [g for g in gpus if g.uuid.startswith(token)]
    return found[0] if len(found) == 1 else None


def _load_pynvml() -> Nvml:
    import pynvml

    nvml: Nvml = pynvml
    return nvml
