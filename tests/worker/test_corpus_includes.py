"""Corpus cases built from another case's sources (expected.toml `include`: the honest program sent
as a header) are whole submissions: the judge's own build line compiles them here, without a GPU,
so a broken include is seen before a GPU machine is asked for."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.worker.hostile_corpus import HostileCase, all_cases
from worker.languages.cuda_program import default_nvcc

WITH_INCLUDES = [c for c in all_cases() if c.language == "cuda-program" and "honest.cuh" in c.files]


def test_the_borrowed_attention_cases_share_the_honest_program():
    assert len(WITH_INCLUDES) >= 5  # the child, fork+exec, dlopen, re-exec and library-image cases


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("case", WITH_INCLUDES, ids=lambda c: c.name)
def test_a_case_with_the_honest_header_builds_with_the_judges_line(case: HostileCase,
                                                                   tmp_path: Path) -> None:
    for name, data in case.files.items():
        (tmp_path / name).write_bytes(data)
    done = subprocess.run(default_nvcc("80"), cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"flash_forward" in (tmp_path / "hw4").read_bytes()  # the honest kernel is in it
