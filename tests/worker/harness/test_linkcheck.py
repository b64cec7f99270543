"""No borrowed attention for the CUDA languages at build time (worker/harness/linkcheck.py): the
built file's library names and CUTLASS attention kernels, and the judging that refuses it (BK on
every test, before anything runs: no GPU needed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from flashjudge.contract import Attempt, JudgePayload
from worker.harness.linkcheck import borrowed_in_binary
from worker.pipeline import JudgeRequest, judge
from worker.sandbox.bwrap import Sandbox

DLOPEN_CUBLAS = b"""#include <dlfcn.h>
#include <cstdio>
int main(int argc, char** argv) {
  void* blas = dlopen("libcublas.so.13", RTLD_NOW);  // a library's GEMM, reached at run time
  std::printf("%p\\n", blas);
  return 0;
}
"""
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def _cc(tmp_path: Path, name: str, source: str, *flags: str) -> Path:
    (tmp_path / f"{name}.c").write_text(source)
    subprocess.run(["gcc", "-o", str(tmp_path / name), str(tmp_path / f"{name}.c"), *flags],
                   check=True, cwd=tmp_path)
    return tmp_path / name


@needs_gcc
def test_a_program_linked_against_cublas_names_it(tmp_path: Path) -> None:
    _cc(tmp_path, "libcublas.so.13", "int cublasCreate_v2(void** h) { return 0; }",
        "-shared", "-fPIC", "-Wl,-soname,libcublas.so.13")
    (tmp_path / "libcublas.so").symlink_to(tmp_path / "libcublas.so.13")
    program = _cc(tmp_path, "hw4", "int cublasCreate_v2(void**);\n"
                  "int main(void) { void* h; return cublasCreate_v2(&h); }", f"-L{tmp_path}",
                  "-lcublas")
    assert borrowed_in_binary(program) == "hw4 uses cuBLAS (libcublas.so)"


@needs_gcc
def test_a_constant_dlopen_of_cudnn_is_seen_and_an_honest_program_passes(tmp_path: Path) -> None:
    program = _cc(tmp_path, "hw4", '#include <dlfcn.h>\nint main(void) { '
                  'return dlopen("libcudnn_graph.so.9", 2) != 0; }', "-ldl")
    assert borrowed_in_binary(program) == "hw4 uses cuDNN (libcudnn_graph.so)"
    honest = _cc(tmp_path, "honest", "int main(void) { return 0; }")
    assert borrowed_in_binary(honest) is None


def test_cutlass_attention_compiled_in_is_named(tmp_path: Path) -> None:
    library = tmp_path / "libsolve.so"
    library.write_bytes(b"\x7fELF...N7cutlass4gemm...15AttentionKernelIfN7cutlass4arch5Sm80E...")
    assert borrowed_in_binary(library) == \
        "libsolve.so compiles CUTLASS's attention kernel (AttentionKernel)"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_a_cuda_program_reaching_cublas_is_bk_on_every_test_without_running(
        engine_cache: Path, cpu_sandbox: Sandbox) -> None:
    request = JudgeRequest("cuda-program", {"hw4.cu": DLOPEN_CUBLAS}, "hw4", ["t01", "t02"])
    result = judge(request, engine_cache, sandbox=cpu_sandbox)
    assert result.compile.ok, result.compile.log
    assert [t.verdict for t in result.tests] == ["BK", "BK"]
    assert "uses cuBLAS (libcublas.so)" in result.tests[0].message


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_an_assignment_that_allows_libraries_judges_the_same_program_on(
        engine_cache: Path, cpu_sandbox: Sandbox) -> None:
    """A TA's "allow library kernels" travels in the judge message and lifts the suite's rule:
    the program is run and judged on its output instead of refused."""
    payload = JudgePayload(Attempt(1, 1, "k"), language="cuda-program",
                           files={"hw4.cu": DLOPEN_CUBLAS}, suite="hw4", tests=["t01"],
                           libraries_allowed=True)
    request = JudgeRequest.of(JudgePayload.from_dict(payload.to_dict()))
    result = judge(request, engine_cache, sandbox=cpu_sandbox)
    assert result.compile.ok, result.compile.log
    assert result.tests[0].verdict != "BK", result.tests[0].message
