"""The run-time rules on borrowed attention for the CUDA languages (worker/running/borrowed.py),
over the facts a GPU run brings back: the processes NVML saw and the censuses the injection wrote.
The kernel names are real: nvcc builds a program here and its census names are read from it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from worker.running.borrowed import (
    borrowed_kernels,
    compiled_names,
    judge_gpu_run,
    library_named,
    name_parts,
)
from worker.sandbox.types import GpuProcess, GpuRunReport

OWN = "_Z13flash_forwardILi32EEvPKfPfif"
PROGRAM = GpuProcess(host_pid=4100, sandbox_pid=2, command="hw4")


def report(census: list[dict[str, object]], *processes: GpuProcess) -> GpuRunReport:
    return GpuRunReport(census=census, processes=list(processes) or [PROGRAM], program_pid=2,
                        watched=True, injected=True)


def test_a_second_process_on_the_gpu_is_borrowed_attention_whatever_it_ran() -> None:
    child = GpuProcess(host_pid=4107, sandbox_pid=7, command="python3")
    found = judge_gpu_run(report([], PROGRAM, child), None)
    assert found is not None and found.borrowed
    assert "a second process used the GPU: python3, pid in sandbox 7" in found.message


def test_the_programs_own_kernels_copies_and_memsets_pass() -> None:
    census = {"pid": 2, "kernels": {OWN: 3, "Memcpy HtoD (Pageable -> Device)": 1, "Memset": 2}}
    assert judge_gpu_run(report([census]), frozenset({OWN})) is None


@pytest.mark.parametrize("kernel", [
    "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32",  # cuBLAS by dlopen at run time
    "_ZN7cutlass7Kernel2I48cutlass_80_simt_sgemm_128x128_8x4_nn_align1EEvNT_6ParamsE",
    "fmha_cutlassF_f32_aligned_64x64_rf_sm80",
])
def test_a_library_kernel_is_named_in_the_bk_even_when_its_bytes_are_in_the_program(
        kernel: str) -> None:
    census = {"pid": 2, "kernels": {OWN: 1, kernel: 1}}
    found = judge_gpu_run(report([census]), frozenset({OWN, kernel}))
    assert found is not None and found.borrowed and kernel in found.message


def test_a_kernel_the_submission_did_not_compile_is_bk() -> None:
    census = {"pid": 2, "kernels": {"_Z15someone_elses_kernelPf": 5}}
    found = judge_gpu_run(report([census]), frozenset({OWN}))
    assert found is not None and found.borrowed and "did not compile" in found.message


def test_a_program_on_the_gpu_without_a_census_is_held_not_passed() -> None:
    found = judge_gpu_run(report([]), frozenset({OWN}))
    assert found is not None and found.held and not found.borrowed


def test_a_census_written_under_another_pid_is_a_second_process() -> None:
    found = judge_gpu_run(report([{"pid": 9, "kernels": {OWN: 1}}]), frozenset({OWN}))
    assert found is not None and found.borrowed and "pid in sandbox 9" in found.message


def test_mangled_names_are_read_part_by_part() -> None:
    assert name_parts(OWN) == ["flash_forward"]
    assert library_named("_ZN7cutlass6KernelIiEEvv")
    assert not library_named(OWN)
    assert borrowed_kernels({"Memset": 1, OWN: 2}, frozenset({OWN})) == []


def test_the_names_a_built_program_carries_include_its_kernels(tmp_path: Path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc here")
    binary = tmp_path / "hw4"
    source = Path(__file__).parents[2] / "hostile" / "cuda-correct" / "hw4.cu"
    subprocess.run(["nvcc", "-O1", "-arch=sm_90", "-o", str(binary), str(source)], check=True)
    names = compiled_names([binary])
    assert OWN in names and "_Z13flash_forwardILi64EEvPKfPfif" in names
