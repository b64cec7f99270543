"""Which CPU cores a GPU worker's timed runs own, read from the node's topology.

A whole program's time is partly host work (reading the input, the copies' CPU side, writing the
output), so a test's figure moved with whatever else ran on the cores it got: the worker's own
threads (comparing the last test's output, removing its work dir), the other GPUs' workers, the
service. So each GPU worker of a node gets cores of its own for its timed runs (a cpuset for the
run's cgroup), taken from the cores near its GPU (the GPU's NUMA node, as the PCI device's
local_cpulist says), split evenly between the GPUs that share them; the first cores of the
machine stay for everything else (the workers' own threads, which pin themselves there, the
service, the system). Where a node has too few cores to give each worker MIN_RUN_CORES of its
own beside the housekeeping ones, nobody is pinned and the timed runs' CPU weight alone keeps
the rest of the host behind them (worker/sandbox/cgroup_layout.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PCI_DEVICES = Path("/sys/bus/pci/devices")
MIN_RUN_CORES = 2  # a run gets at least this many cores of its own, or no pinning at all


@dataclass(frozen=True)
class CpuPlan:
    """One worker's share of the node's cores."""

    run: frozenset[int] | None  # its timed runs' cores (None: not pinned)
    house: frozenset[int] | None  # where the worker's own threads go (None: anywhere)

    def run_list(self) -> str | None:
        """The run cores as a cpuset list ("4,5,6,7"), or None."""
        return ",".join(str(c) for c in sorted(self.run)) if self.run else None


def parse_cpulist(text: str) -> frozenset[int]:
    """ "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11} (the kernel's list format)."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return frozenset(cpus)


def local_cpus(pci_bus_id: str, devices: Path = PCI_DEVICES) -> frozenset[int] | None:
    """The cores near a GPU (NVML's PCI bus id, e.g. "00000000:00:06.0"), or None if unknown."""
    name = pci_bus_id.lower()
    if len(name.split(":")[0]) == 8:  # NVML pads the domain to 8 digits; sysfs uses 4
        name = name[4:]
    try:
        return parse_cpulist((devices / name / "local_cpulist").read_text()) or None
    except (OSError, ValueError):
        return None


def plan_cpus(available: frozenset[int], gpus_local: Sequence[frozenset[int] | None],
              index: int, house_cores: int) -> CpuPlan:
    """Worker `index`'s share: the node's GPUs' local cores (None: any core) in the order of the
    node's workers, `house_cores` of the lowest cores kept back for everything else."""
    ordered = sorted(available)
    house = frozenset(ordered[:house_cores])
    pool = available - house
    groups: dict[frozenset[int], list[int]] = {}
    for i, near in enumerate(gpus_local):
        groups.setdefault((near or available) & pool, []).append(i)
    for cores, members in groups.items():
        if index in members:
            share = len(cores) // len(members)
            if share < MIN_RUN_CORES:
                return CpuPlan(None, None)
            mine = sorted(cores)[members.index(index) * share:(members.index(index) + 1) * share]
            return CpuPlan(frozenset(mine), house)
    return CpuPlan(None, None)
