"""Compiling the cuda-kernel programs once per worker (per GPU architecture and nvcc).

The programs are our own code: the in-process harness (harness.cu), the split timer's two
processes of docs/kernel-timing.md, the trusted timer (timer.cu) and the student's runner
(runner.cu), and the CUDA injection every GPU run gets (census_inject.c: the driver gate's
signals and the census of kernels, a shared library linked against the toolkit's CUPTI). They
are built outside the sandbox, into the cache directory, keyed by a hash of every source file of
this package, the architecture and nvcc's version: a worker builds each on first use and reuses
it afterwards; concurrent workers on one machine take a lock instead of racing.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

HARNESS_NAME = "flashjudge-harness"
TIMER_NAME = "flashjudge-timer"
RUNNER_NAME = "flashjudge-runner"
BUILD_TIMEOUT_S = 300
INJECTION_NAME = "libfjcensus.so"
SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".c")  # what pyproject.toml packages


class HarnessBuildError(RuntimeError):
    """The harness could not be built: a problem of this worker's toolchain, never a student's."""


@dataclass(frozen=True)
class Toolchain:
    """Where nvcc and the CUDA runtime it links against live."""

    nvcc: str  # path of nvcc
    lib_dir: Path  # directory holding libcudart.so (rpath of the harness)
    version: str  # `nvcc --version`'s last line


@dataclass(frozen=True)
class Program:
    """One program of this package: its binary's name and its main source file."""

    name: str  # the binary, e.g. "flashjudge-timer"
    main: str  # the source nvcc compiles (it includes the package's headers), e.g. "timer.cu"


HARNESS = Program(HARNESS_NAME, "harness.cu")
TIMER = Program(TIMER_NAME, "timer.cu")
RUNNER = Program(RUNNER_NAME, "runner.cu")
CHANNEL_SELFTEST = Program("flashjudge-channel-selftest", "channel_selftest.cpp")
INJECTION = Program(INJECTION_NAME, "census_inject.c")


def package_sources() -> dict[str, str]:
    """Every source file of the package by name: what a program may include, and its cache key."""
    root = resources.files("worker.harness")
    return {entry.name: entry.read_text(encoding="utf-8") for entry in sorted(
        root.iterdir(), key=lambda e: e.name) if entry.name.endswith(SOURCE_SUFFIXES)}


def _lib_dir(nvcc: str, cuda_home: str | None) -> Path:
    """The CUDA runtime's directory: cuda_home/lib64, else next to the real nvcc."""
    candidates = [Path(cuda_home) / "lib64"] if cuda_home else []
    dry = [nvcc, "-dryrun", "-c", "-x", "cu", "/dev/null", "-o", "/dev/null"]
    real = subprocess.run(dry, capture_output=True, text=True).stderr
    for line in real.splitlines():
        if "_HERE_=" in line:  # the real bin dir, past wrapper scripts and symlinks
            candidates.append(Path(line.split("_HERE_=", 1)[1].strip()).parent / "lib64")
    candidates += [Path("/usr/local/cuda/lib64"), Path(nvcc).resolve().parent.parent / "lib64"]
    for candidate in candidates:
        if any(candidate.glob("libcudart.so*")):
            return candidate
    raise HarnessBuildError("cannot find libcudart.so next to nvcc (set CUDA_HOME)")


def find_toolchain(cuda_home: str | None = None) -> Toolchain:
    """nvcc on the PATH and the runtime it links; `cuda_home` (Machine.cuda_home: $CUDA_HOME)
    is looked in first for the runtime."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        raise HarnessBuildError("nvcc not found: the cuda-kernel track needs the CUDA toolkit")
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    return Toolchain(nvcc, _lib_dir(nvcc, cuda_home), (version.strip().splitlines() or [""])[-1])


def cupti_dir(toolchain: Toolchain) -> Path:
    """The directory of the toolkit's libcupti.so (beside the runtime, or under extras/CUPTI)."""
    for candidate in (toolchain.lib_dir, toolchain.lib_dir.parent / "extras" / "CUPTI" / "lib64"):
        if any(candidate.glob("libcupti.so*")):
            return candidate
    raise HarnessBuildError(f"cannot find libcupti.so near {toolchain.lib_dir}")


def harness_command(toolchain: Toolchain, arch: str, source: Path, output: Path) -> list[str]:
    """nvcc line: the shared CUDA runtime (the student's library uses the same one), rpath set;
    for the injection, a shared library of C with CUPTI and no CUDA runtime at all."""
    if source.suffix == ".c":
        cupti = str(cupti_dir(toolchain))
        return [toolchain.nvcc, "-O2", "-shared", "-Xcompiler", "-fPIC", "-cudart", "none",
                "-Xlinker", "--disable-new-dtags", "-Xlinker", f"-rpath,{cupti}",
                "-o", str(output), str(source), f"-L{cupti}", "-lcupti", "-ldl"]
    return [
        toolchain.nvcc, "-std=c++17", "-O2", f"-arch=sm_{arch}", "-cudart", "shared",
        "-Xlinker", "--disable-new-dtags", "-Xlinker", f"-rpath,{toolchain.lib_dir}",
        "-o", str(output), str(source), "-ldl",
    ]


def injection_library(cache_dir: Path, toolchain: Toolchain | None = None) -> Path:
    """The CUDA injection (census_inject.c), built into `cache_dir/harness/` on first use."""
    return program_binary(cache_dir, "any", INJECTION, toolchain)


def harness_binary(cache_dir: Path, arch: str, toolchain: Toolchain | None = None) -> Path:
    """The harness for `arch`, built into `cache_dir/harness/` on first use."""
    return program_binary(cache_dir, arch, HARNESS, toolchain)


def program_binary(cache_dir: Path, arch: str, program: Program,
                   toolchain: Toolchain | None = None) -> Path:
    """`program` for `arch`, built into `cache_dir/harness/` on first use (then reused)."""
    toolchain = toolchain or find_toolchain()
    sources = package_sources()
    text = "\0".join(f"{name}\0{body}" for name, body in sources.items())
    key = hashlib.sha256(f"{text}\0{program.main}\0{arch}\0{toolchain.version}".encode())
    directory = Path(cache_dir) / "harness" / f"{program.name}-sm{arch}-{key.hexdigest()[:16]}"
    binary = directory / program.name
    if binary.is_file():
        return binary
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.is_file():
            _compile(toolchain, arch, program, sources, directory, binary)
    return binary


def _compile(toolchain: Toolchain, arch: str, program: Program, sources: dict[str, str],
             directory: Path, binary: Path) -> None:
    for name, body in sources.items():
        (directory / name).write_text(body, encoding="utf-8")
    partial = directory / f"{program.name}.partial"
    cmd = harness_command(toolchain, arch, directory / program.main, partial)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        why = f"nvcc took over {BUILD_TIMEOUT_S} s building {program.name}"
        raise HarnessBuildError(why) from exc
    if done.returncode != 0:
        raise HarnessBuildError(f"nvcc failed building {program.name}:\n{done.stderr[-4000:]}")
    partial.chmod(0o755)
    partial.rename(binary)
