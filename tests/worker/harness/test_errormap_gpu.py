"""Error maps on a real GPU: a cuda-kernel with a tiling bug comes back WA with its error map,
through both kernel paths (the trusted split timer, and the in-process harness it falls back to).

The kernel is the forger corpus's correct kernel with one bug: every odd 64-row block of queries
gets 0.5 added, the kind of mistake an off-by-one in a block index makes. The map must say so in
words a student can act on. Needs an NVIDIA GPU, nvcc and the sandbox (gpu marker).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashjudge.contract import TestResult, Verdict
from kernels.errormap import ErrorMap
from testcases.prepared import PreparedTest, prepare_suite
from testcases.suite import load_suite
from worker.harness.build import find_toolchain, harness_binary
from worker.harness.in_process import run_kernel_test
from worker.harness.split_run import SplitTimer, run_split_kernel_test
from worker.languages import BuildSettings, get_language
from worker.languages.arch import gpu_arch, supported_archs
from worker.languages.cuda_kernel import FRESH_SEED_OFFSET
from worker.machine import Machine
from worker.running.build import build
from worker.running.testrun import RunContext
from worker.sandbox.bwrap import BwrapSandbox
from worker.sandbox.workspace import InputCache

pytestmark = [pytest.mark.gpu, pytest.mark.slow]
KERNEL = Path(__file__).resolve().parents[2] / "hostile/forgers/memory-timings-twin/solve.cu"
RIGHT = "O[base + (size_t)row * D + c] = o[c] / l;"
ODD_BLOCKS_WRONG = "O[base + (size_t)row * D + c] = o[c] / l + (blockIdx.x % 2 ? 0.5f : 0.0f);"
TEST_ID = "t05"  # B=80, N=512, d=32: eight 64-row blocks per batch


@pytest.fixture(scope="module")
def context(engine_cache: Path, machine: Machine) -> Iterator[RunContext]:
    if not Path("/dev/nvidiactl").exists() or shutil.which("nvcc") is None:
        pytest.skip("needs an NVIDIA GPU and nvcc")
    source = KERNEL.read_text()
    assert RIGHT in source
    sandbox = BwrapSandbox.for_machine(machine, gpu=True)
    artifacts = Path(tempfile.mkdtemp(prefix="errormap-gpu-"))
    settings = BuildSettings(gpu_arch=gpu_arch(machine), supported_archs=supported_archs())
    outcome = build(get_language("cuda-kernel"),
                    {"solve.cu": source.replace(RIGHT, ODD_BLOCKS_WRONG).encode()}, settings,
                    sandbox, artifacts)
    assert outcome.product is not None, outcome.compile.log
    yield RunContext(sandbox=sandbox, product=outcome.product, inputs=InputCache(), tolerance=5e-3,
                     env={"LD_LIBRARY_PATH": str(find_toolchain(machine.cuda_home).lib_dir)},
                     harness=harness_binary(engine_cache, gpu_arch(machine)),
                     cache_dir=engine_cache, machine=machine)
    shutil.rmtree(artifacts, ignore_errors=True)


def prepared(cache: Path) -> tuple[PreparedTest, PreparedTest]:
    suite = load_suite("hw4")
    spec = suite.test(TEST_ID)
    first = prepare_suite(suite, cache, "auto", tests=[TEST_ID])[TEST_ID]
    fresh = prepare_suite(suite, cache, "auto", spec.seed + FRESH_SEED_OFFSET,
                          tests=[TEST_ID])[TEST_ID]
    return first, fresh


def assert_located(result: TestResult) -> None:
    assert result.verdict == Verdict.WA, result.message
    assert result.error_map is not None
    found = ErrorMap.from_dict(result.error_map)
    assert "every second 64-row block" in found.reading, found.reading
    assert found.reading.startswith("errors only in rows 64-127"), found.reading
    assert found.bad == 80 * 256 * 32  # every value of the odd blocks, in every batch


def test_the_trusted_timer_path_locates_the_tiling_bug(context: RunContext,
                                                       engine_cache: Path) -> None:
    split = SplitTimer.build(engine_cache, gpu_arch(context.machine))
    result, _ = run_split_kernel_test(context, *prepared(engine_cache), split)
    assert_located(result)


def test_the_in_process_path_locates_the_tiling_bug(context: RunContext,
                                                    engine_cache: Path) -> None:
    assert_located(run_kernel_test(context, *prepared(engine_cache)))
