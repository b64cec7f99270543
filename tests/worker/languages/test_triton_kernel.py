"""triton-kernel without a GPU: the registry and inference, the build's CE (a syntax check and a
solve() check, run in the real sandbox), the heartbeat's answer, and the Python runner's messages
matching the timer's protocol byte for byte."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from flashjudge.contract import LANGUAGES
from worker.celery_adapter.heartbeat import judged_languages
from worker.harness import triton_runner
from worker.languages import BuildSettings, get_language, infer_language
from worker.languages.triton_env import _background, triton_python, triton_runtime
from worker.languages.triton_kernel import with_jit_time
from worker.running.build import build
from worker.running.submission import SubmissionError
from worker.sandbox.bwrap import Sandbox

CASES = Path(__file__).resolve().parents[2] / "hostile" / "triton"
PROTOCOL = Path(triton_runner.__file__).with_name("protocol.cuh")


def _build(name: str, sandbox: Sandbox, tmp_path: Path):  # -> BuildOutcome
    files = {"solve.py": (CASES / name / "solve.py").read_bytes()}
    return build(get_language("triton-kernel"), files, BuildSettings(), sandbox, tmp_path)


def test_a_py_file_with_solve_is_a_triton_kernel_on_the_gpu_queue() -> None:
    assert infer_language({"solve.py": (CASES / "honest" / "solve.py").read_bytes()}) == \
        "triton-kernel"
    assert LANGUAGES["triton-kernel"].uses_gpu and LANGUAGES["triton-kernel"].main_file == \
        "solve.py"


def test_exactly_one_py_file_is_accepted() -> None:
    with pytest.raises(SubmissionError, match="exactly one .py"):
        get_language("triton-kernel").plan({"a.py": b"", "b.py": b""}, BuildSettings())


def test_a_python_syntax_error_is_a_ce_with_pythons_message(cpu_sandbox: Sandbox,
                                                             tmp_path: Path) -> None:
    outcome = _build("syntax-error", cpu_sandbox, tmp_path)
    assert not outcome.compile.ok and outcome.product is None
    assert "SyntaxError" in outcome.compile.log and "line 4" in outcome.compile.log


def test_a_file_without_solve_is_a_ce_that_says_so(cpu_sandbox: Sandbox, tmp_path: Path) -> None:
    outcome = _build("no-solve", cpu_sandbox, tmp_path)
    assert not outcome.compile.ok
    assert "defines no top-level solve(Q, K, V, O, B, N, d)" in outcome.compile.log


def test_an_honest_kernel_builds_into_itself(cpu_sandbox: Sandbox, tmp_path: Path) -> None:
    outcome = _build("honest", cpu_sandbox, tmp_path)
    assert outcome.compile.ok, outcome.compile.log
    assert outcome.product is not None and outcome.product.read_bytes() == \
        (CASES / "honest" / "solve.py").read_bytes()


def test_the_heartbeat_offers_triton_only_where_torch_and_triton_import() -> None:
    triton_runtime()  # the probe the heartbeat starts in the background, done here first
    judged_languages("gpu", "NVIDIA H100 80GB HBM3")  # starts it (already answered)
    while _background and _background[0].is_alive():
        _background[0].join()
    gpu_worker = judged_languages("gpu", "NVIDIA H100 80GB HBM3")
    assert ("triton-kernel" in gpu_worker) == (triton_python() is not None)
    assert "triton-kernel" not in judged_languages("gpu", "cpu")
    assert "cuda-kernel" in gpu_worker


def test_the_jit_time_is_shown_apart_from_the_figure() -> None:
    from flashjudge.contract import TestResult, Verdict
    result = TestResult("t05", Verdict.AC, 1e-4, message="mean 0.100 ms over 640 timed calls",
                        stderr_tail="flashjudge-jit: 2.345 s\n")
    assert with_jit_time(result).message.endswith(
        "Triton compile and autotune 2.35 s before timing (not counted)")


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_the_python_runners_messages_have_the_timers_sizes(tmp_path: Path) -> None:
    program = tmp_path / "sizes.cpp"
    program.write_text(f'#include "{PROTOCOL}"\n#include <cstdio>\nint main() {{ std::printf('
                       '"%zu %zu %zu %zu", sizeof(fjt::Hello), sizeof(fjt::Ready), '
                       'sizeof(fjt::Run), sizeof(fjt::Done)); }\n')
    subprocess.run(["g++", "-std=c++17", "-o", str(tmp_path / "sizes"), str(program)], check=True)
    sizes = subprocess.run([str(tmp_path / "sizes")], capture_output=True, text=True, check=True)
    ours = [triton_runner.HELLO.size, triton_runner.READY.size, triton_runner.RUN.size,
            triton_runner.DONE.size]
    assert sizes.stdout.split() == [str(n) for n in ours]
