"""Compiling the cuda-kernel harness once per worker (per GPU architecture and nvcc).

The harness is our own code, so it is built outside the sandbox, into the cache directory, keyed by
a hash of its source, the architecture and nvcc's version: a worker builds it on first use and
reuses it afterwards; concurrent workers on one machine take a lock instead of racing.
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
BUILD_TIMEOUT_S = 300


class HarnessBuildError(RuntimeError):
    """The harness could not be built: a problem of this worker's toolchain, never a student's."""


@dataclass(frozen=True)
class Toolchain:
    """Where nvcc and the CUDA runtime it links against live."""

    nvcc: str  # path of nvcc
    lib_dir: Path  # directory holding libcudart.so (rpath of the harness)
    version: str  # `nvcc --version`'s last line


def harness_source() -> str:
    return (resources.files("worker.harness") / "harness.cu").read_text(encoding="utf-8")


def _lib_dir(nvcc: str) -> Path:
    """The CUDA runtime's directory: $CUDA_HOME/lib64, else next to the real nvcc."""
    homes = [os.environ[v] for v in ("CUDA_HOME", "CUDA_PATH") if v in os.environ]
    candidates = [Path(home) / "lib64" for home in homes]
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


def find_toolchain() -> Toolchain:
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        raise HarnessBuildError("nvcc not found: the cuda-kernel track needs the CUDA toolkit")
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    return Toolchain(nvcc, _lib_dir(nvcc), (version.strip().splitlines() or [""])[-1])


def harness_command(toolchain: Toolchain, arch: str, source: Path, output: Path) -> list[str]:
    """nvcc line: the shared CUDA runtime (the student's library uses the same one), rpath set."""
    return [
        toolchain.nvcc, "-std=c++17", "-O2", f"-arch=sm_{arch}", "-cudart", "shared",
        "-Xlinker", "--disable-new-dtags", "-Xlinker", f"-rpath,{toolchain.lib_dir}",
        "-o", str(output), str(source), "-ldl",
    ]


def harness_binary(cache_dir: Path, arch: str, toolchain: Toolchain | None = None) -> Path:
    """The harness for `arch`, built into `cache_dir/harness/` on first use."""
    toolchain = toolchain or find_toolchain()
    source = harness_source()
    key = hashlib.sha256(f"{source}\0{arch}\0{toolchain.version}".encode()).hexdigest()[:16]
    directory = Path(cache_dir) / "harness" / f"sm{arch}-{key}"
    binary = directory / HARNESS_NAME
    if binary.is_file():
        return binary
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.is_file():
            _compile(toolchain, arch, source, directory, binary)
    return binary


def _compile(toolchain: Toolchain, arch: str, source: str, directory: Path, binary: Path) -> None:
    (directory / "harness.cu").write_text(source, encoding="utf-8")
    partial = directory / f"{HARNESS_NAME}.partial"
    cmd = harness_command(toolchain, arch, directory / "harness.cu", partial)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise HarnessBuildError(f"nvcc took over {BUILD_TIMEOUT_S} s building the harness") from exc
    if done.returncode != 0:
        raise HarnessBuildError(f"nvcc failed building the harness:\n{done.stderr[-4000:]}")
    partial.chmod(0o755)
    partial.rename(binary)
