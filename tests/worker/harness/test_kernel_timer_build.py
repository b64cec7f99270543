"""nvcc builds on this machine (no GPU): the timer, the runner, the channel self-test, and every
forger and twin of the corpus as the shared library a submission becomes."""

from __future__ import annotations

import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.worker.harness.forger_corpus import FORGERS, all_forgers
from worker.harness.build import CHANNEL_SELFTEST, RUNNER, TIMER, program_binary
from worker.harness.timer_report import read_report

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@needs_nvcc
def test_the_timer_and_the_runner_build_for_sm90_without_libcuda(tmp_path: Path) -> None:
    for program in (TIMER, RUNNER):
        binary = program_binary(tmp_path, "90", program)
        assert binary.read_bytes()[:4] == b"\x7fELF" and binary.name == program.name
        needed = subprocess.run(["readelf", "-d", str(binary)], capture_output=True,
                                text=True).stdout
        assert "libcudart.so" in needed and "libcuda.so" not in needed  # no driver at build time
    again = program_binary(tmp_path, "90", TIMER)
    assert again.stat().st_mtime_ns == program_binary(tmp_path, "90", TIMER).stat().st_mtime_ns


@needs_nvcc
def test_the_channel_plan_and_report_work_here(tmp_path: Path) -> None:
    """Framing, descriptor passing over the socket, turn-taking, the batch plan; and the report
    the timer's C++ writes is the one the judge's Python reads."""
    selftest = program_binary(tmp_path, "90", CHANNEL_SELFTEST)
    done = subprocess.run([str(selftest), str(tmp_path / "report.json")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
    report = read_report(tmp_path / "report.json")
    assert report.runner == 'solve() failed: "quoted"?'  # quotes kept, control characters not
    batch = report.batches[0]
    assert [c.input for c in batch.calls] == ["official", "random"]
    assert batch.calls[1].nonfinite == 7 and batch.calls[1].sampled_error == float("inf")
    assert batch.events_ms == (4.5, 5.25) and batch.protocol.endswith("out of turn")


def _build(directory: Path, out: Path) -> tuple[str, str]:
    cmd = ["nvcc", "-shared", "-Xcompiler", "-fPIC", "-arch=sm_90", "-o",
           str(out / f"{directory.name}.so"), str(directory / "solve.cu")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return directory.name, "" if done.returncode == 0 else done.stderr[-2000:]


@needs_nvcc
@pytest.mark.slow
def test_every_forger_and_twin_compiles_as_a_shared_library(tmp_path: Path) -> None:
    directories = [FORGERS / case.name for case in all_forgers()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = {name: log for name, log in pool.map(lambda d: _build(d, tmp_path), directories)
                    if log}
    assert not failures, failures
    assert len(list(tmp_path.glob("*.so"))) == len(directories)
