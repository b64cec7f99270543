"""Building student Makefiles for this GPU: the architecture rewrite is a pure text function."""

from __future__ import annotations

from worker.languages.arch import rewrite_arch

CUDA13 = {"75", "80", "86", "87", "88", "89", "90", "100", "103", "110", "120", "121"}
COURSE = ('NVFLAGS := -std=c++11 -O3 -Xptxas="-v" -arch=sm_61\n'
          "hw4: hw4.cu\n\tnvcc $(NVFLAGS) -o $@ $?\n")


def test_course_makefile_gets_this_gpus_arch_and_says_so() -> None:
    out = rewrite_arch(COURSE, CUDA13, "90")
    assert "-arch=sm_90" in out.text and "sm_61" not in out.text
    assert out.notes == ["changed sm_61 to sm_90 for this GPU (sm_61: not supported by this nvcc)"]


def test_gencode_pairs_are_rewritten_both_ways() -> None:
    out = rewrite_arch("-gencode arch=compute_61,code=sm_61 -gencode=arch=compute_52,code=[sm_52]",
                       CUDA13, "90")
    assert out.text == "-gencode arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=[sm_90]"
    assert len(out.notes) == 4


def test_supported_archs_no_newer_than_the_gpu_are_kept() -> None:
    text = "-arch=sm_80 -gencode arch=compute_90a,code=sm_90a"
    out = rewrite_arch(text, CUDA13, "90")
    assert out.text == text and not out.changed


def test_an_arch_newer_than_the_gpu_is_brought_down() -> None:
    out = rewrite_arch("-arch=sm_100", CUDA13, "90")
    assert out.text == "-arch=sm_90"
    assert "newer than this GPU" in out.notes[0]


def test_native_is_rewritten_because_builds_see_no_gpu() -> None:
    assert rewrite_arch("nvcc -arch=native -o hw4", CUDA13, "90").text == "nvcc -arch=sm_90 -o hw4"


def test_words_that_merely_contain_sm_are_left_alone() -> None:
    text = "ASM_61 := 1\nsmsm_61x\n"
    assert rewrite_arch(text, CUDA13, "90").text == text
