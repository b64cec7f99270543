"""The borrowed-kernel rule on kernel names as CUPTI reports them (recorded from torch 2.x runs on
an H100: SDPA's memory-efficient and flash kernels, cuBLAS's GEMMs, torch's own element-wise and
softmax kernels, the runner's flush), and the census file's own checks."""

from __future__ import annotations

import json
from pathlib import Path

from worker.harness.census import (
    CENSUS_NAME,
    Census,
    allowed,
    borrowed,
    census_flag,
    own_functions,
    read_census,
)
from worker.harness.split_processes import runner_argv
from worker.harness.split_run import SplitTimer

FLUSH = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<unsigned "
         "char>, std::array<char*, 1ul> >(int, at::native::FillFunctor<unsigned char>, "
         "std::array<char*, 1ul>)")
SOFTMAX = ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
           "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)")
COPY = ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<"
        "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()"
        "() const::{lambda()#7}::operator()() const::{lambda(float)#1}> >(int, "
        "at::native::gpu_kernel_impl_nocast<...>)")
SDPA_MEM_EFFICIENT = "fmha_cutlassF_f32_aligned_64x64_rf_sm80"
SDPA_FLASH = ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, "
              "false, false, cutlass::half_t, Flash_kernel_traits<64, 128, 128, 4, "
              "cutlass::half_t> >, false, false, false, false, true, true, false, false>(Flash_fwd_"
              "params)")
CUBLAS = ["sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_warpgroupsize1x1x1_"
          "execute_segment_k_off_kernel__5x_cublas", "nvjet_tst_128x64_64x8_1x2_h_bz_NNT",
          "ampere_sgemm_128x64_nn", "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_"
          "32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
          "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, "
          "false, cublasGemvParamsEx<int, float const*, float const*, float*> >(...)"]
OWN = frozenset({"attention_fwd", "solve", "launch"})


def test_the_submissions_own_triton_kernel_and_torchs_helpers_are_allowed() -> None:
    for name in ("attention_fwd", FLUSH, SOFTMAX, COPY, "Memset (Device)",
                 "Memcpy DtoD (Device -> Device)"):
        assert allowed(name, OWN), name


def test_sdpa_and_cublas_kernels_are_borrowed_whatever_called_them() -> None:
    for name in (SDPA_MEM_EFFICIENT, SDPA_FLASH, *CUBLAS):
        assert not allowed(name, OWN), name


def test_a_triton_kernel_not_defined_in_the_file_is_borrowed() -> None:
    """A library's Triton kernel (xformers, inductor) is named after a function the submission
    does not define."""
    assert not allowed("_fwd_kernel_splitK", OWN)
    assert not allowed("triton_per_fused__softmax_0", OWN)


def test_naming_ones_kernel_like_a_library_does_not_whitelist_the_library() -> None:
    name = "nvjet_tst_128x64_64x8_1x2_h_bz_NNT"
    assert not allowed(name, OWN | {name})


def test_the_verdict_names_the_most_launched_borrowed_kernel_first() -> None:
    kernels = {FLUSH: 900, SDPA_MEM_EFFICIENT: 900, CUBLAS[0]: 3, "attention_fwd": 0}
    assert borrowed(kernels, OWN) == [SDPA_MEM_EFFICIENT, CUBLAS[0]]
    assert borrowed({FLUSH: 900, "attention_fwd": 900}, OWN) == []


def test_own_functions_are_read_from_the_source_the_judge_was_given() -> None:
    source = (b"import triton\n@triton.jit\ndef k(X):\n    pass\n"
              b"def solve(*a):\n    def inner(): pass\n")
    assert own_functions(source) == {"k", "solve", "inner"}
    assert own_functions(b"def broken(:") == frozenset()


def test_a_census_short_of_the_timers_calls_is_not_believed(tmp_path: Path) -> None:
    assert census_flag(None, 10) is not None
    assert census_flag(Census({FLUSH: 9}, 9), 10) is not None  # the profiler stopped early
    assert census_flag(Census({FLUSH: 11}, 11), 10) is None  # + the untimed first call


def test_a_census_file_that_is_malformed_is_no_census(tmp_path: Path) -> None:
    path = tmp_path / "census.json"
    path.write_text(json.dumps({"kernels": {FLUSH: 3}, "calls": 3}))
    assert read_census(path) == Census({FLUSH: 3}, 3)
    path.write_text("{not json")
    assert read_census(path) is None
    assert read_census(tmp_path / "absent.json") is None


def test_the_runner_takes_a_census_only_where_the_suites_rule_reads_it(tmp_path: Path) -> None:
    """The profiler costs the runner's process: a suite without the rule runs without it."""
    triton = SplitTimer(tmp_path / "timer", tmp_path / "runner.py", interpreter="python3",
                        library_name="solve.py", census=True)
    with_rule = runner_argv(triton.programs(tmp_path / "solve.py", census=True))
    without = runner_argv(triton.programs(tmp_path / "solve.py", census=False))
    assert with_rule[-2:] == ["--census", CENSUS_NAME]
    assert "--census" not in without and without[-1] == "./solve.py"
    cuda = SplitTimer(tmp_path / "timer", tmp_path / "runner")  # records no kernels at all
    assert "--census" not in runner_argv(cuda.programs(tmp_path / "lib.so", census=True))
