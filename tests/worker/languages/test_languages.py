"""The language registry: inference from the files, and each language's build command."""

from __future__ import annotations

import pytest

from worker.languages import BuildSettings, get_language, infer_language
from worker.languages.arch import supported_archs
from worker.running.submission import SubmissionError, check_files

PROGRAM = b"int main(int argc, char** argv) { return 0; }"
KERNEL = b'extern "C" void solve(const float* Q, const float* K, const float* V, float* O, int B,' \
         b" int N, int d) {}"
SETTINGS = BuildSettings(gpu_arch="90", supported_archs=frozenset({"75", "80", "90"}))


@pytest.mark.parametrize(("files", "language"), [
    ({"hw4.cu": PROGRAM}, "cuda-program"),
    ({"hw4.cu": PROGRAM, "Makefile": b"hw4:\n\tnvcc -o hw4 hw4.cu\n"}, "cuda-program"),
    ({"flash.cu": KERNEL}, "cuda-kernel"),
    ({"hw4.cu": KERNEL}, "cuda-kernel"),
    ({"hw4.c": PROGRAM}, "c-program"),
    ({"main.cpp": PROGRAM, "util.cpp": b""}, "c-program"),
    ({"hw4.c": PROGRAM, "Makefile": b"hw4: hw4.c\n\tgcc -o hw4 hw4.c\n"}, "c-program"),
])
def test_language_is_inferred_from_the_files(files: dict[str, bytes], language: str) -> None:
    assert infer_language(files) == language


def test_files_of_no_known_language_are_refused_with_a_message() -> None:
    with pytest.raises(SubmissionError, match="cannot tell the language"):
        infer_language({"notes.txt": b"hello"})


def test_unknown_language_names_the_known_ones() -> None:
    with pytest.raises(SubmissionError, match="cuda-kernel"):
        get_language("fortran")


@pytest.mark.parametrize("name", ["../hw4.c", ".hidden.c", "dir/hw4.c", "", "a" * 80])
def test_unsafe_file_names_are_refused(name: str) -> None:
    with pytest.raises(SubmissionError) as caught:
        check_files({name: PROGRAM})
    assert caught.value.field == name


def test_default_cuda_build_targets_this_gpu() -> None:
    plan = get_language("cuda-program").plan({"hw4.cu": PROGRAM}, SETTINGS)
    assert plan.argv == ["nvcc", "-std=c++17", "-O3", "-arch=sm_90", "-o", "hw4", "hw4.cu", "-lm"]


def test_course_makefile_is_rewritten_on_the_copy_that_is_built() -> None:
    files = {"hw4.cu": PROGRAM, "Makefile": b"hw4: hw4.cu\n\tnvcc -arch=sm_61 -o hw4 hw4.cu\n"}
    plan = get_language("cuda-program").plan(files, SETTINGS)
    assert plan.argv == ["make", "hw4"]
    assert b"-arch=sm_90" in plan.files["Makefile"]
    assert files["Makefile"].count(b"sm_61") == 1  # the submission itself is untouched
    assert plan.notes and "sm_61" in plan.notes[0]


def test_c_program_uses_gcc_or_gxx_with_openmp() -> None:
    c = get_language("c-program").plan({"hw4.c": PROGRAM}, SETTINGS)
    cpp = get_language("c-program").plan({"hw4.cpp": PROGRAM}, SETTINGS)
    assert c.argv[0] == "gcc" and "-fopenmp" in c.argv
    assert cpp.argv[0] == "g++" and "-fopenmp" in cpp.argv


def test_kernel_needs_exactly_one_cu_file() -> None:
    with pytest.raises(SubmissionError, match="exactly one"):
        get_language("cuda-kernel").plan({"a.cu": KERNEL, "b.cu": KERNEL}, SETTINGS)


def test_local_nvcc_lists_the_h100_arch() -> None:
    archs = supported_archs()
    if not archs:
        pytest.skip("nvcc is not installed")
    assert "90" in archs
