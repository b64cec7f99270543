"""The mistake corpus (tests/hostile/mistakes/) judged for real, as a worker judges: sandboxed,
with gcc here and nvcc + a GPU for the gpu-marked cases. Every WA test of a program with a
planted mistake must name that mistake; the correct and the garbage programs must name
nothing. The CUDA sources at least compile here (nvcc needs no GPU to compile)."""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

from flashjudge.contract import JudgeResult
from testcases.suite import load_suite
from tests.worker.mistake_corpus import CORPUS, MistakeCase, all_cases
from worker.pipeline import JudgeRequest, judge
from worker.sandbox.bwrap import Sandbox
from worker.settings import WorkerSettings

CASES = all_cases()


def judged(case: MistakeCase, cache: Path, sandbox: Sandbox | None) -> JudgeResult:
    suite = load_suite("hw4-mini")
    suite = dataclasses.replace(suite, tests=[suite.test(t) for t in case.tests])
    config = WorkerSettings().judge_config(suite=suite)
    request = JudgeRequest(case.language, case.files, suite.name, list(case.tests))
    return judge(request, cache, sandbox=sandbox, config=config)


def check(case: MistakeCase, result: JudgeResult) -> None:
    """Verdicts as expected; each WA named right; a planted mistake gives at least one WA."""
    assert result.compile.ok, result.compile.log
    verdicts = {t.id: str(t.verdict) for t in result.tests}
    assert set(verdicts.values()) <= set(case.verdicts), f"{case.name}: {verdicts}"
    wrong = [t for t in result.tests if str(t.verdict) == "WA"]
    if case.mistake:
        assert wrong, f"{case.name}: its mistake went unnoticed: {verdicts}"
    for t in wrong:
        assert case.named_right(t.mistake), f"{case.name} {t.id}: named {t.mistake}"
        if t.mistake:
            assert " equals " in t.mistake["line"] or "looks like" in t.mistake["line"]


@pytest.mark.parametrize("case", [c for c in CASES if not c.gpu], ids=lambda c: c.name)
def test_c_program_mistake_is_named(case: MistakeCase, engine_cache: Path,
                                    cpu_sandbox: Sandbox) -> None:
    check(case, judged(case, engine_cache, cpu_sandbox))


@pytest.mark.gpu
@pytest.mark.parametrize("case", [c for c in CASES if c.gpu], ids=lambda c: c.name)
def test_cuda_mistake_is_named(case: MistakeCase, engine_cache: Path) -> None:
    check(case, judged(case, engine_cache, None))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("case", [c for c in CASES if c.gpu], ids=lambda c: c.name)
def test_cuda_mistake_compiles(case: MistakeCase, tmp_path: Path) -> None:
    """What the GPU check judges builds: nvcc compiles without a GPU."""
    (source,) = [name for name in case.files if name.endswith(".cu")]
    (tmp_path / source).write_bytes(case.files[source])
    done = subprocess.run(["nvcc", "-std=c++17", "-O3", "-arch=sm_90", "-c", source, "-o", "x.o"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_corpus_is_up_to_date() -> None:
    """The committed corpus is what make_corpus.py writes from its templates."""
    spec = importlib.util.spec_from_file_location("make_corpus", CORPUS / "make_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stale = [str(p.relative_to(CORPUS)) for p, text in module.corpus().items()
             if not p.is_file() or p.read_text() != text]
    assert stale == [], "run python3 tests/hostile/mistakes/make_corpus.py"


def test_every_mistake_has_a_c_program_and_a_cuda_program() -> None:
    names = {c.name for c in CASES}
    for case in CASES:
        if case.name.startswith("c-"):
            assert f"cuda-{case.name[2:]}" in names
