"""Nsight Compute's CSV pages (`ncu --import R --csv --page details|raw`), summarised."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.feedback.ncu_report import parse_profile

HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Block Size","Grid Size","Device","CC",')
KERNEL = '"flash_fwd(const float *, const float *, const float *, float *, int, int)"'
INIT = '"zero_fill(float *, int)"'


def detail(launch: int, kernel: str, section: str, metric: str, unit: str, value: str) -> str:
    return (f'"{launch}","4242","hw4","127.0.0.1",{kernel},"1","7","(128, 1, 1)","(640, 1, 1)",'
            f'"0","9.0","{section}","{metric}","{unit}","{value}","",""')


DETAILS = "\n".join([
    "==PROF== Connected to process 4242 (/work/hw4)",
    HEAD + '"Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type"',
    detail(0, INIT, "GPU Speed Of Light Throughput", "Duration", "us", "3.14"),
    detail(1, KERNEL, "GPU Speed Of Light Throughput", "DRAM Frequency", "Ghz", "2.62"),
    detail(1, KERNEL, "GPU Speed Of Light Throughput", "Duration", "ms", "1.25"),
    detail(1, KERNEL, "GPU Speed Of Light Throughput", "Memory Throughput", "%", "31.07"),
    detail(1, KERNEL, "GPU Speed Of Light Throughput", "Compute (SM) Throughput", "%", "62.4"),
    detail(1, KERNEL, "Occupancy", "Theoretical Occupancy", "%", "50"),
    detail(1, KERNEL, "Occupancy", "Achieved Occupancy", "%", "47.85"),
    detail(1, KERNEL, "Launch Statistics", "Registers Per Thread", "register/thread", "1,024"),
])

STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
RAW_METRICS = ["gpu__time_duration.sum", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
               STALL.format("long_scoreboard"), STALL.format("barrier"),
               STALL.format("selected"), STALL.format("math_pipe_throttle"),
               STALL.format("short_scoreboard")]
RAW = "\n".join([
    HEAD + ",".join(f'"{m}"' for m in RAW_METRICS),
    '"","","","","","","","","","",""' + ',"usecond","%","inst","inst","inst","inst","inst"',
    '"0","4242","hw4","127.0.0.1",' + INIT + ',"1","7","(256, 1, 1)","(80, 1, 1)","0","9.0",'
    '"3.14","12.5","0.8","0.1","1.0","0.0","0.2"',
    '"1","4242","hw4","127.0.0.1",' + KERNEL + ',"1","7","(128, 1, 1)","(640, 1, 1)","0","9.0",'
    '"1,250.00","20.3","4.75","2.10","1.00","0.95","0.50"',
])


def test_headline_numbers_come_from_the_details_page_in_seconds_and_percent() -> None:
    kernels = parse_profile(DETAILS, RAW)
    assert [k.id for k in kernels] == [0, 1]
    main = kernels[1]
    assert main.name.startswith("flash_fwd(")
    assert main.duration_s == pytest.approx(1.25e-3)
    assert (main.achieved_occupancy_pct, main.memory_throughput_pct,
            main.sm_throughput_pct) == (47.85, 31.07, 62.4)
    assert kernels[0].duration_s == pytest.approx(3.14e-6)


def test_the_raw_page_gives_the_top_stall_reasons_and_fills_gaps() -> None:
    main = parse_profile(DETAILS, RAW)[1]
    assert [(s.reason, s.cycles_per_instruction) for s in main.stalls] == [
        ("long_scoreboard", 4.75), ("barrier", 2.10), ("math_pipe_throttle", 0.95)]
    assert main.dram_throughput_pct == 20.3  # only on the raw page here


def test_the_raw_page_alone_is_enough_and_garbage_gives_nothing() -> None:
    alone = parse_profile("", RAW)[1]
    assert alone.duration_s == pytest.approx(1.25e-3)  # "1,250.00" usecond
    assert parse_profile("ncu: error: no kernels were profiled", "") == []


def test_real_h100_pages_of_the_correct_program() -> None:
    # captured on an H100 (Nsight Compute 2025.3.1) from tests/hostile/cuda-correct on 2x128x64
    samples = Path(__file__).with_name("feedback_samples")
    details = (samples / "ncu-h100-details.csv").read_text()
    raw = (samples / "ncu-h100-raw.csv").read_text()
    [kernel] = parse_profile(details, raw)
    assert kernel.name == "void flash_forward<64>(const float *, float *, int, float)"
    assert kernel.duration_s == pytest.approx(48.58e-6)
    assert (kernel.memory_throughput_pct, kernel.dram_throughput_pct) == (0.9, 0.18)
    assert kernel.achieved_occupancy_pct == 3.12 and kernel.sm_throughput_pct == 0.37
    assert [s.reason for s in kernel.stalls] == ["no_instruction", "long_scoreboard", "wait"]
