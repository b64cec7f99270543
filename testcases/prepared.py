"""The prepared cache: each test's input file and expected output, made once and kept on disk.

Entries are keyed by (suite, test, seed, shape, generator version, reference version), so a new
seed, a changed shape or a new reference makes new files instead of reusing stale ones:

    <cache_dir>/<suite>/<test>/s<seed>-<B>x<N>x<d>-g<gen>[-<values><scale>]/
        input.bin                  the generated input
        expected-<reference>.bin   the reference's output
        guard-<reference>.json     the trivial-answer guard's result (written last)

Every file is written under a temporary name and renamed when complete, so a killed prepare never
leaves a half file that looks finished; the guard record is the "this entry is done" marker.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kernels.atomicfile import atomic_write, temporary_name
from kernels.reference import compute_reference, reference_name, resolve_device
from testcases.generator import GENERATOR_VERSION, effective_seed, write_input
from testcases.guard import GuardError, GuardResult, guard_test
from testcases.suite import Suite, TestSpec

__all__ = ["GuardError", "PrepareEvent", "PreparedTest", "default_cache_dir", "prepare_suite"]


def default_cache_dir() -> Path:
    """$FLASHJUDGE_DATA_DIR/cache, the data dir defaulting to ./data."""
    return Path(os.environ.get("FLASHJUDGE_DATA_DIR", "data")) / "cache"


@dataclass(frozen=True)
class PreparedTest:
    """A test ready to judge: its input and expected output on disk."""

    spec: TestSpec  # the test's shape and limits
    seed: int  # the seed its input was generated from
    input_path: Path  # the input file
    expected_path: Path  # the reference output
    reference: str  # which reference made expected_path, e.g. "cpu-float64-v1"
    reused: bool = False  # True when everything was already in the cache
    guard: GuardResult | None = None  # the trivial answers' errors (both over the tolerance)


@dataclass(frozen=True)
class PrepareEvent:
    """Progress report: what prepare_suite is doing now."""

    test_id: str  # the test being prepared
    stage: str  # "input" | "expected" | "guard" | "done"
    index: int  # position of the test (0-based)
    total: int  # number of tests being prepared
    reused: bool = False  # on "done": nothing had to be computed


Progress = Callable[[PrepareEvent], None]


def entry_dir(cache_dir: Path, suite: Suite, spec: TestSpec, seed: int) -> Path:
    """The directory holding one (suite, test, seed, shape, generator) entry."""
    key = f"s{seed}-{spec.B}x{spec.N}x{spec.d}-g{GENERATOR_VERSION}"
    if spec.values != "uniform" or spec.scale != 3.0:
        key += f"-{spec.values}{spec.scale:g}"
    return Path(cache_dir) / suite.name / spec.id / key


def prepare_suite(
    suite: Suite,
    cache_dir: str | os.PathLike[str] | None = None,
    device: str = "auto",
    seed: int | None = None,
    progress: Progress | None = None,
    tests: Sequence[str] | None = None,
) -> dict[str, PreparedTest]:
    """Make sure every test (or those in `tests`) has its input and guarded expected output."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    resolved = resolve_device(device)
    reference = reference_name(resolved)
    specs = [suite.test(t) for t in tests] if tests is not None else list(suite.tests)
    prepared: dict[str, PreparedTest] = {}
    for index, spec in enumerate(specs):

        def report(
            stage: str, reused: bool = False, _spec: TestSpec = spec, _i: int = index
        ) -> None:
            if progress is not None:
                progress(PrepareEvent(_spec.id, stage, _i, len(specs), reused))

        prepared[spec.id] = _prepare_test(suite, spec, cache, resolved, reference, seed, report)
    return prepared


def _prepare_test(
    suite: Suite,
    spec: TestSpec,
    cache: Path,
    device: str,
    reference: str,
    seed: int | None,
    report: Callable[..., None],
) -> PreparedTest:
    """Generate, compute and guard whatever of one test is missing from the cache."""
    actual_seed = effective_seed(spec, seed)
    directory = entry_dir(cache, suite, spec, actual_seed)
    with entry_lock(directory):  # workers starting cold together: one fills, the others reuse
        return _fill_entry(suite, spec, directory, device, reference, actual_seed, report)


@contextlib.contextmanager
def entry_lock(directory: Path) -> Iterator[None]:
    """An exclusive lock on one cache entry, across the processes (and GPU workers) sharing the
    cache: without it two workers starting cold each compute every expected output."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _fill_entry(suite: Suite, spec: TestSpec, directory: Path, device: str, reference: str,
                actual_seed: int, report: Callable[..., None]) -> PreparedTest:
    """Whatever of one entry is missing, made under its lock (reused when another made it)."""
    input_path = directory / "input.bin"
    expected_path = directory / f"expected-{reference}.bin"
    guard_path = directory / f"guard-{reference}.json"
    done = (
        _complete(input_path, spec.header.input_bytes)
        and _complete(expected_path, spec.header.output_bytes)
        and guard_path.is_file()
    )
    if done:
        guard = GuardResult(**json.loads(guard_path.read_text()))
        report("done", reused=True)
        return PreparedTest(spec, actual_seed, input_path, expected_path, reference, True, guard)
    if not _complete(input_path, spec.header.input_bytes):
        report("input")
        write_input(input_path, spec, actual_seed)
    if not _complete(expected_path, spec.header.output_bytes):
        report("expected")
        _compute_expected(input_path, expected_path, device)
    report("guard")
    guard = guard_test(spec.id, input_path, expected_path, suite.tolerance)
    with atomic_write(guard_path) as f:
        f.write(json.dumps(guard.to_dict()).encode())
    report("done")
    return PreparedTest(spec, actual_seed, input_path, expected_path, reference, False, guard)


def _complete(path: Path, size: int) -> bool:
    return path.is_file() and path.stat().st_size == size


def _compute_expected(input_path: Path, expected_path: Path, device: str) -> None:
    """Run the reference into a temporary name, then rename: never a half expected file."""
    tmp = temporary_name(expected_path)
    try:
        compute_reference(input_path, tmp, device)
        os.replace(tmp, expected_path)
    finally:
        tmp.unlink(missing_ok=True)
