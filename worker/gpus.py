"""The GPUs of this node by identity: which ones the judge may use, and how a worker is pinned.

A worker pinned with CUDA_VISIBLE_DEVICES=<index> reaches the index-th GPU in CUDA's own order
(fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID), while nvidia-smi, NVML and /dev/nvidiaN
count differently (PCI order, the driver's minor number). On a node with mixed GPUs a run could
then be labelled with another GPU's model (so the wrong limits and board) and the sandbox could
bind another GPU's device node. So a worker is pinned by the GPU's UUID, which every layer reads
the same, and the device node comes from NVML's minor number for that UUID.

The operator chooses the GPUs: `--gpus all|none|0,2|GPU-<uuid>,...`, and an operator's
CUDA_VISIBLE_DEVICES (indices in nvidia-smi's order, or UUIDs) limits `all` to those GPUs, so a
node shared with other work gives the judge only what it was given.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol


class GpuSelectionError(ValueError):
    """An operator's GPU choice that names no GPU of this node (message fit to print)."""


@dataclass(frozen=True)
class Gpu:
    """One GPU as NVML describes it."""

    index: int  # NVML's index: nvidia-smi's GPU number (PCI bus order)
    uuid: str  # "GPU-8c1e...": what a worker is pinned with
    name: str  # the model, e.g. "NVIDIA H100 80GB HBM3" (limits and boards follow it)
    minor: int | None  # the driver's minor: /dev/nvidia<minor> (None: the sandbox reads /proc)
    pci_bus_id: str  # "00000000:19:00.0"

    def pin(self) -> dict[str, str]:
        """The environment that pins one worker process to this GPU, whatever the node mixes."""
        env = {"CUDA_VISIBLE_DEVICES": self.uuid, "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
               "FLASHJUDGE_GPU_NAME": self.name}
        return env if self.minor is None else {**env, "FLASHJUDGE_GPU_MINOR": str(self.minor)}

    def label(self) -> str:
        node = "" if self.minor is None else f", /dev/nvidia{self.minor}"
        return f"GPU {self.index} {self.name} ({self.uuid}{node})"


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


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def list_gpus(nvml: Nvml) -> list[Gpu]:
    """Every GPU NVML sees, in its (PCI) order."""
    nvml.nvmlInit()
    try:
        found = []
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            found.append(Gpu(index=index, uuid=_text(nvml.nvmlDeviceGetUUID(handle)),
                             name=_text(nvml.nvmlDeviceGetName(handle)),
                             minor=int(nvml.nvmlDeviceGetMinorNumber(handle)),
                             pci_bus_id=_text(nvml.nvmlDeviceGetPciInfo(handle).busId)))
        return found
    finally:
        nvml.nvmlShutdown()


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


SMI_QUERY = ["nvidia-smi", "--query-gpu=index,uuid,name,pci.bus_id", "--format=csv,noheader"]


def smi_gpus() -> list[Gpu]:
    """The same list from nvidia-smi (no minor numbers: the sandbox resolves the UUID)."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(SMI_QUERY, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [parse_smi_line(line) for line in out.splitlines() if line.count(",") >= 3]


def parse_smi_line(line: str) -> Gpu:
    index, uuid, rest = (part.strip() for part in line.split(",", 2))
    name, _, bus = rest.rpartition(",")
    return Gpu(index=int(index), uuid=uuid, name=name.strip(), minor=None, pci_bus_id=bus.strip())


def _load_pynvml() -> Nvml:
    import pynvml

    nvml: Nvml = pynvml
    return nvml
