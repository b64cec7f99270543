"""Parsing Nsight Compute's CSV pages into a per-kernel summary for TAs and students.

`ncu --import R --csv --page details` gives one row per (kernel, metric) with the friendly names
("Duration", "Achieved Occupancy", "Memory Throughput", "Compute (SM) Throughput"); `--page raw`
gives one row per kernel and one column per raw metric, from which the warp stall reasons come
(smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio). Pure text in, dataclasses out.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import asdict, dataclass, field
from typing import Any

DETAILS = {  # friendly metric name -> KernelProfile field
    "Duration": "duration_s",
    "Achieved Occupancy": "achieved_occupancy_pct",
    "Memory Throughput": "memory_throughput_pct",
    "Compute (SM) Throughput": "sm_throughput_pct",
    "DRAM Throughput": "dram_throughput_pct",
}
RAW = {  # raw metric -> KernelProfile field, when the details page lacks it
    "gpu__time_duration.sum": "duration_s",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": "memory_throughput_pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_throughput_pct",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": "dram_throughput_pct",
}
TIME_UNITS = {"nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3,
              "ms": 1e-3, "second": 1.0, "s": 1.0}
_STALL = re.compile(
    r"^smsp__average_warps?_issue_stalled_(?P<reason>\w+?)_per_issue_active\.ratio$")
NOT_STALLS = ("selected", "not_selected")  # issuing, or eligible but another warp issued
TOP_STALLS = 3


@dataclass
class Stall:
    """One warp stall reason: cycles a warp spends stalled on it per issued instruction."""

    reason: str  # e.g. "long_scoreboard" (waiting on global/local memory)
    cycles_per_instruction: float  # the larger, the more it costs


@dataclass
class KernelProfile:
    """One profiled kernel launch."""

    id: int  # ncu's launch id (0-based, in launch order)
    name: str  # the kernel's name as ncu shows it
    duration_s: float | None = None  # GPU time of the launch
    achieved_occupancy_pct: float | None = None  # active warps / max warps per SM, %
    memory_throughput_pct: float | None = None  # busiest memory unit, % of its peak
    sm_throughput_pct: float | None = None  # busiest SM pipe, % of its peak
    dram_throughput_pct: float | None = None  # device memory traffic, % of its peak
    stalls: list[Stall] = field(default_factory=list)  # the top stall reasons, worst first

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", "").strip())
    except ValueError:
        return None


def _value(field_name: str, text: str, unit: str) -> float | None:
    value = _number(text)
    if value is not None and field_name == "duration_s":
        value *= TIME_UNITS.get(unit.strip(), 1.0)
    return value


def _rows(text: str) -> list[dict[str, str]]:
    """CSV rows, starting at the header line (ncu may print "==PROF==" lines before it)."""
    start = text.find('"ID"')
    return list(csv.DictReader(io.StringIO(text[start:]))) if start >= 0 else []


def parse_details(text: str) -> dict[int, KernelProfile]:
    """The details page: launch id -> profile with the headline numbers."""
    kernels: dict[int, KernelProfile] = {}
    for row in _rows(text):
        launch = _number(row.get("ID", ""))
        if launch is None:
            continue
        kernel = kernels.setdefault(int(launch), KernelProfile(int(launch), row["Kernel Name"]))
        name = DETAILS.get(row.get("Metric Name", ""))
        if name is not None:
            setattr(kernel, name, _value(name, row.get("Metric Value", ""),
                                         row.get("Metric Unit", "")))
    return kernels


def parse_raw(text: str, kernels: dict[int, KernelProfile] | None = None,
              top: int = TOP_STALLS) -> dict[int, KernelProfile]:
    """The raw page (a units row under the header): fills what is missing, adds the stalls."""
    kernels = kernels if kernels is not None else {}
    rows = _rows(text)
    units = next((r for r in rows if _number(r.get("ID", "")) is None), {})
    for row in rows:
        launch = _number(row.get("ID", ""))
        if launch is None:
            continue
        kernel = kernels.setdefault(int(launch), KernelProfile(int(launch), row["Kernel Name"]))
        for metric, name in RAW.items():
            if getattr(kernel, name) is None and metric in row:
                setattr(kernel, name, _value(name, row[metric], units.get(metric, "")))
        kernel.stalls = _stalls(row, top)
    return kernels


def _stalls(row: dict[str, str], top: int) -> list[Stall]:
    found = []
    for metric, text in row.items():
        match = _STALL.match(metric or "")
        value = _number(text or "")
        if match and value is not None and match.group("reason") not in NOT_STALLS:
            found.append(Stall(match.group("reason"), value))
    return sorted(found, key=lambda s: -s.cycles_per_instruction)[:top]


def parse_profile(details: str, raw: str) -> list[KernelProfile]:
    """Both pages merged, in launch order."""
    kernels = parse_raw(raw, parse_details(details))
    return [kernels[k] for k in sorted(kernels)]
