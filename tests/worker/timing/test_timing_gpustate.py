"""Throttle reasons from NVML bit masks, slowdowns from violation counters, and no NVML here."""

from __future__ import annotations

import ctypes

import pytest

from worker.timing.gpustate import (
    APPLICATIONS_CLOCKS,
    DISPLAY_CLOCKS,
    GPU_IDLE,
    HW_POWER_BRAKE,
    HW_SLOWDOWN,
    HW_THERMAL,
    SW_POWER_CAP,
    SW_THERMAL,
    SYNC_BOOST,
    GpuMonitor,
    GpuSample,
    classify_reasons,
    read_gpu_state,
    slowed_between,
)


def nvml_library_present() -> bool:
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def state(reasons: int | None = 0, power_ns: int | None = None,
          thermal_ns: int | None = None) -> GpuSample:
    return GpuSample(1980, 2619, 40, 120.0, reasons, power_ns, thermal_ns)


def test_an_idle_gpu_on_application_clocks_is_not_slowed() -> None:
    reasons = classify_reasons(GPU_IDLE | APPLICATIONS_CLOCKS | DISPLAY_CLOCKS)
    assert not reasons.slowed
    assert reasons.benign == ("gpu-idle", "applications-clocks", "display-clocks")
    assert classify_reasons(0).benign == classify_reasons(0).slowing == ()


@pytest.mark.parametrize("bit, name", [
    (SW_POWER_CAP, "sw-power-cap"), (HW_SLOWDOWN, "hw-slowdown"), (SYNC_BOOST, "sync-boost"),
    (SW_THERMAL, "sw-thermal"), (HW_THERMAL, "hw-thermal"), (HW_POWER_BRAKE, "hw-power-brake"),
])
def test_each_slowdown_bit_slows(bit: int, name: str) -> None:
    reasons = classify_reasons(bit | GPU_IDLE)
    assert reasons.slowed and reasons.slowing == (name,) and reasons.benign == ("gpu-idle",)


def test_nvml_documented_bit_values() -> None:
    assert (SW_POWER_CAP, HW_SLOWDOWN, SYNC_BOOST, SW_THERMAL, HW_THERMAL, HW_POWER_BRAKE) == (
        0x4, 0x8, 0x10, 0x20, 0x40, 0x80)


def test_undocumented_bits_are_reported_not_counted_as_slowing() -> None:
    reasons = classify_reasons(0x8000 | GPU_IDLE)
    assert reasons.unknown == 0x8000 and not reasons.slowed


def test_a_slowing_reason_at_either_read_marks_the_run() -> None:
    assert slowed_between(state(GPU_IDLE), state(SW_POWER_CAP), 1.0)
    assert slowed_between(state(HW_THERMAL), state(GPU_IDLE), 1.0)
    assert not slowed_between(state(GPU_IDLE), state(GPU_IDLE), 1.0)


def test_violation_counters_catch_a_slowdown_neither_read_saw() -> None:
    before = state(GPU_IDLE, power_ns=5_000_000_000, thermal_ns=0)
    assert slowed_between(before, state(GPU_IDLE, 5_100_000_000, 0), 1.0)  # 100 ms of 1 s
    assert not slowed_between(before, state(GPU_IDLE, 5_010_000_000, 0), 1.0)  # 10 ms of 1 s
    assert slowed_between(before, state(GPU_IDLE, 5_000_000_000, 30_000_000), 1.0)


def test_no_state_is_never_slowed() -> None:
    assert not slowed_between(None, None, 1.0)
    assert not slowed_between(state(None), state(None), 1.0)


def test_a_sample_survives_its_message_form() -> None:
    sample = state(SW_POWER_CAP, 1, 2)
    assert GpuSample.from_dict(sample.to_dict()) == sample


@pytest.mark.skipif(nvml_library_present(), reason="this machine has NVML")
def test_without_nvml_the_state_is_none_not_an_error() -> None:
    assert GpuMonitor.open() is None
    assert GpuMonitor.open("GPU-0000") is None
    assert read_gpu_state() is None
