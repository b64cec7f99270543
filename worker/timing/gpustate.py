"""The GPU's state around a timed run: clocks, temperature, power and why its clocks are held back.

A run made while the GPU was slowed (a power cap, a thermal or hardware slowdown) is not the
student's time, so the timing policy redoes it once or keeps it flagged. Read through NVML with the
maintained binding `nvidia-ml-py` (module `pynvml`, the optional `gpu` extra). Where NVML is missing
(no binding, no driver library, no GPU: the CPU track) everything here answers None, never raises.

The reasons NVML reports at one instant miss most slowdowns: a read just before a run sees an idle
GPU and one just after sees it idle again. So each read also takes NVML's cumulative violation
counters (nanoseconds spent below the requested clocks for power and for heat); their growth across
a run says whether it was slowed while it ran.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
from types import ModuleType, TracebackType
from typing import Any

from worker.machine import Machine

# Clock event ("throttle") reason bits, from nvml.h as documented in the NVML API reference
# (group NvmlClocksEventReasons; BoardLimit and Reliability from the releases that added them).
GPU_IDLE = 0x1  # nothing runs on the GPU, clocks drop to idle
APPLICATIONS_CLOCKS = 0x2  # clocks set to the application clocks (a fixed setting)
SW_POWER_CAP = 0x4  # the software power scaling holds clocks under the power limit
HW_SLOWDOWN = 0x8  # hardware slowdown (clocks halved or worse): heat, power brake, fast trigger
SYNC_BOOST = 0x10  # held to the slowest GPU of a sync-boost group
SW_THERMAL = 0x20  # software thermal slowdown
HW_THERMAL = 0x40  # hardware thermal slowdown
HW_POWER_BRAKE = 0x80  # external power brake (the system's power supply)
DISPLAY_CLOCKS = 0x100  # limited by the display clock setting (a fixed setting)
BOARD_LIMIT = 0x200  # board limit
RELIABILITY = 0x400  # reliability limit

BENIGN_REASONS = {  # states that do not slow a run, or slow every run alike (fixed settings)
    GPU_IDLE: "gpu-idle",
    APPLICATIONS_CLOCKS: "applications-clocks",
    DISPLAY_CLOCKS: "display-clocks",
}
SLOWING_REASONS = {  # transient states: a run made under one is slower than the program is
    SW_POWER_CAP: "sw-power-cap",
    HW_SLOWDOWN: "hw-slowdown",
    SYNC_BOOST: "sync-boost",
    SW_THERMAL: "sw-thermal",
    HW_THERMAL: "hw-thermal",
    HW_POWER_BRAKE: "hw-power-brake",
    BOARD_LIMIT: "board-limit",
    RELIABILITY: "reliability",
}
VIOLATION_SHARE = 0.02  # a run is slowed when the violation counters grew by > 2% of its time


@dataclass(frozen=True)
class ThrottleReasons:
    """A reason bit mask, split into what slows a run and what does not."""

    mask: int  # the mask NVML reported
    benign: tuple[str, ...]  # names of the benign bits set (BENIGN_REASONS)
    slowing: tuple[str, ...]  # names of the slowing bits set (SLOWING_REASONS)
    unknown: int  # bits no NVML release documented when this was written: reported, not slowing

    @property
    def slowed(self) -> bool:
        """Whether any slowing reason is set."""
        return bool(self.slowing)


def classify_reasons(mask: int) -> ThrottleReasons:
    """Split a clock event reason mask into benign and slowing reasons."""
    benign = tuple(name for bit, name in BENIGN_REASONS.items() if mask & bit)
    slowing = tuple(name for bit, name in SLOWING_REASONS.items() if mask & bit)
    known = sum(BENIGN_REASONS) | sum(SLOWING_REASONS)
    return ThrottleReasons(mask, benign, slowing, mask & ~known)


@dataclass(frozen=True)
class GpuSample:
    """One read of the GPU's state; a field NVML could not read on this GPU is None."""

    sm_clock_mhz: int | None  # current SM clock
    mem_clock_mhz: int | None  # current memory clock
    temperature_c: int | None  # GPU core temperature
    power_w: float | None  # board power draw
    reasons: int | None  # clock event reason mask (classify_reasons)
    power_violation_ns: int | None  # cumulative time held below the requested clocks for power
    thermal_violation_ns: int | None  # cumulative time held below the requested clocks for heat

    @property
    def throttle(self) -> ThrottleReasons | None:
        """The reasons, classified (None when NVML did not report them)."""
        return None if self.reasons is None else classify_reasons(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GpuSample:
        return cls(**{name: data.get(name) for name in cls.__dataclass_fields__})


def _violation_growth_ns(before: GpuSample, after: GpuSample) -> int:
    """How much the power and thermal violation counters grew between two reads (0 if unread)."""
    growth = 0
    for name in ("power_violation_ns", "thermal_violation_ns"):
        start, end = getattr(before, name), getattr(after, name)
        if start is not None and end is not None:
            growth += max(0, end - start)
    return growth


def slowed_between(before: GpuSample | None, after: GpuSample | None, run_s: float) -> bool:
    """Whether the GPU was slowed around a run of `run_s` seconds: a slowing reason at either
    read, or violation counters that grew by more than VIOLATION_SHARE of the run's time."""
    for sample in (before, after):
        reasons = sample.throttle if sample is not None else None
        if reasons is not None and reasons.slowed:
            return True
    if before is None or after is None:
        return False
    return _violation_growth_ns(before, after) > VIOLATION_SHARE * run_s * 1e9


def _handle(nvml: ModuleType, device: str) -> Any:
    """NVML's handle of `device` (an index or a UUID prefix); raises NVMLError or LookupError."""
    if device.isdigit():
        return nvml.nvmlDeviceGetHandleByIndex(int(device))
    for index in range(nvml.nvmlDeviceGetCount()):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        uuid = nvml.nvmlDeviceGetUUID(handle)
        if (uuid.decode() if isinstance(uuid, bytes) else uuid).startswith(device):
            return handle
    raise LookupError(f"no GPU with UUID {device}")


class GpuMonitor:
    """An open NVML session on one GPU: `sample()` before and after every timed run.

    Open it with GpuMonitor.of(machine) (None where NVML is absent or the machine has no GPU),
    close it when the worker stops."""

    def __init__(self, nvml: ModuleType, handle: Any) -> None:
        self._nvml = nvml  # the pynvml module, initialised
        self._handle = handle  # the GPU's NVML handle

    @classmethod
    def open(cls, device: str | None = None) -> GpuMonitor | None:
        """A monitor of `device` (a UUID prefix, or an index taken as NVML's: PCI order;
        default "0"), or None: no pynvml, no driver library, no such GPU. Never raises."""
        try:
            import pynvml
        except ImportError:
            return None
        try:
            pynvml.nvmlInit()
        except Exception:  # noqa: BLE001 - NVMLError, or an OSError from an odd driver library
            return None
        try:
            return cls(pynvml, _handle(pynvml, (device or "").strip() or "0"))
        except Exception:  # noqa: BLE001 - no such GPU: no monitor, as without NVML
            pynvml.nvmlShutdown()
            return None

    @classmethod
    def of(cls, machine: Machine) -> GpuMonitor | None:
        """A monitor of the GPU `machine` was handed (Machine.gpu, by its UUID); None without one
        (the CPU track) or without NVML."""
        return cls.open(machine.gpu.uuid) if machine.gpu is not None else None

    def _read(self, function: str, *args: Any) -> Any:
        """One NVML read; None where this GPU or driver does not support it."""
        try:
            return getattr(self._nvml, function)(self._handle, *args)
        except Exception:  # noqa: BLE001 - NVMLError (not supported) or a missing function
            return None

    def _violation_ns(self, policy: int) -> int | None:
        status = self._read("nvmlDeviceGetViolationStatus", policy)
        return None if status is None else int(status.violationTime)

    def _reasons(self) -> int | None:
        reasons = self._read("nvmlDeviceGetCurrentClocksEventReasons")
        if reasons is None:  # drivers before the rename
            reasons = self._read("nvmlDeviceGetCurrentClocksThrottleReasons")
        return reasons

    def sample(self) -> GpuSample:
        """The GPU's state now (fields NVML cannot read are None)."""
        nvml = self._nvml
        power_mw = self._read("nvmlDeviceGetPowerUsage")
        return GpuSample(
            sm_clock_mhz=self._read("nvmlDeviceGetClockInfo", nvml.NVML_CLOCK_SM),
            mem_clock_mhz=self._read("nvmlDeviceGetClockInfo", nvml.NVML_CLOCK_MEM),
            temperature_c=self._read("nvmlDeviceGetTemperature", nvml.NVML_TEMPERATURE_GPU),
            power_w=None if power_mw is None else power_mw / 1000.0,
            reasons=self._reasons(),
            power_violation_ns=self._violation_ns(nvml.NVML_PERF_POLICY_POWER),
            thermal_violation_ns=self._violation_ns(nvml.NVML_PERF_POLICY_THERMAL),
        )

    def close(self) -> None:
        # closing twice, or the driver went away: nothing left to do
        with contextlib.suppress(Exception):
            self._nvml.nvmlShutdown()

    def __enter__(self) -> GpuMonitor:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


def read_gpu_state(device: str | None = None) -> GpuSample | None:
    """One read of the GPU's state, or None without NVML (opens and closes a session: for a
    status page, not for every run)."""
    monitor = GpuMonitor.open(device)
    if monitor is None:
        return None
    with monitor:
        return monitor.sample()
