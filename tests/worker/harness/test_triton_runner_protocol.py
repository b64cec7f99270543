"""The Python runner (worker/harness/triton_runner.py) speaking the timer's protocol, on a machine
without a GPU: a stand-in T (this test, on a SOCK_SEQPACKET socket, passing a descriptor in HELLO),
a stand-in libcuda.so.1 built here with gcc and a stand-in torch (tests/worker/harness/fake_torch/)
that records launches as the profiler names them. What the real GPU adds is in test_triton_gpu.py;
this checks the runner's own logic: HELLO parsed, READY after the untimed first call, one DONE per
RUN with the event times, QUIT ending it cleanly after the census is written, and a file that does
not import refused as a compile error (exit 5) with Python's message. The last test runs the
runner as a GPU node does: through run_split, in its own bubblewrap sandbox with the triton path's
binds and environment, against the channel self-test standing in for the timer in the timer's
sandbox (the timer's own listening code, protocol.cuh), both when the runner's sandbox gets the
same unprivileged host uid as the timer's and when a bind out of that uid's reach (a JIT cache
under a 0700 directory) makes bwrap fall back to the worker's uid: the socket must admit both."""

from __future__ import annotations

import os
import resource
import shutil
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from worker.harness import triton_runner as tr
from worker.harness.build import CHANNEL_SELFTEST, program_binary
from worker.harness.census import borrowed, census_flag, own_functions, read_census
from worker.harness.split_processes import SplitJob, SplitPrograms, run_split
from worker.languages.triton_kernel import JIT_CACHE, SOURCE, jit_cache
from worker.languages.triton_kernel import runner_env as triton_runner_env
from worker.sandbox.bwrap import Bind, BwrapSandbox, Limits
from worker.sandbox.workspace import make_workdir, remove_tree

FAKES = Path(__file__).with_name("fake_torch")
SOLVE = b"""import torch


def attention_fwd():
    torch.LAUNCHES.append("attention_fwd")


def solve(Q, K, V, O, B, N, d):
    attention_fwd()
    if (O.data_ptr() - 0x7F0000000000) // 2048 == 1:  # slot 1 borrows
        torch.LAUNCHES.append("fmha_cutlassF_f32_aligned_64x64_rf_sm80")
"""
BASE = 0x7F0000000000  # the stand-in libcuda's address
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


@pytest.fixture
def runner_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    lib = tmp_path / "lib"
    lib.mkdir()
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib / "libcuda.so.1"),
                    str(FAKES / "libcuda.c")], check=True)
    yield {"PYTHONPATH": str(FAKES), "LD_LIBRARY_PATH": str(lib), "PATH": os.environ["PATH"]}


def start(tmp_path: Path, source: bytes, env: dict[str, str], file_size: int | None = None
          ) -> tuple[socket.socket, subprocess.Popen[bytes]]:
    """Our stand-in T listening, the runner started and accepted, HELLO sent (3 slots); with
    `file_size`, the runner limited to files of that size, as the sandbox limits it to the test's
    output size."""

    def limit() -> None:
        if file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    work = tmp_path / "work"
    work.mkdir()
    (work / "solve.py").write_bytes(source)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(str(tmp_path / "timer.sock"))
    listener.listen(1)
    listener.settimeout(30)
    proc = subprocess.Popen([sys.executable, tr.__file__, "--connect", str(tmp_path / "timer.sock"),
                             "./solve.py", "--census", "census.json"], cwd=work, env=env,
                            stderr=subprocess.PIPE, preexec_fn=limit)
    sock, _ = listener.accept()
    sock.settimeout(30)
    hello = tr.HELLO.pack(tr.MAGIC, tr.KIND_HELLO, 2, 4, 8, 3, 4096, 2048, 256)
    fd = os.open("/dev/null", os.O_RDONLY)
    socket.send_fds(sock, [hello], [fd])
    os.close(fd)
    return sock, proc


def test_the_runner_serves_each_request_and_leaves_a_census(tmp_path: Path,
                                                             runner_env: dict[str, str]) -> None:
    sock, proc = start(tmp_path, SOLVE, runner_env)
    ready = tr.READY.unpack(sock.recv(4096))
    assert ready[:3] == (tr.MAGIC, tr.KIND_READY, 1)
    for request in range(3):
        slots = [request] + [0] * (tr.MAX_CALLS - 1)
        sock.send(tr.RUN.pack(tr.MAGIC, tr.KIND_RUN, request, 1, *slots))
        done = tr.DONE.unpack(sock.recv(4096))
        assert done[:5] == (tr.MAGIC, tr.KIND_DONE, request, 1, 1) and done[5] == 0.25
    sock.send(struct.pack("<II", tr.MAGIC, tr.KIND_QUIT))
    sock.close()
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert b"flashjudge-jit:" in stderr
    census = read_census(tmp_path / "work" / "census.json")
    assert census is not None and census.calls == 3 and census.flushes() == 3
    assert census.kernels["attention_fwd"] == 4  # the untimed first call and three timed ones
    assert census_flag(census, 3) is None
    assert borrowed(census.kernels, own_functions(SOLVE)) == [
        "fmha_cutlassF_f32_aligned_64x64_rf_sm80"]


def test_a_long_run_leaves_a_whole_census_under_the_file_size_limit(
        tmp_path: Path, runner_env: dict[str, str]) -> None:
    """Thousands of timed calls made a profiler trace larger than the test's output, the runner's
    file-size limit in the sandbox (an H100, 2026-11-26: 1374 calls on t05): the census was
    empty and an honest submission held. The census is counted in memory now."""
    sock, proc = start(tmp_path, SOLVE, runner_env, file_size=4096)
    assert tr.READY.unpack(sock.recv(4096))[2] == 1
    for request in range(10):
        sock.send(tr.RUN.pack(tr.MAGIC, tr.KIND_RUN, request, tr.MAX_CALLS,
                              *[0] * tr.MAX_CALLS))
        assert tr.DONE.unpack(sock.recv(4096))[4] == 1
    sock.send(struct.pack("<II", tr.MAGIC, tr.KIND_QUIT))
    sock.close()
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    census = read_census(tmp_path / "work" / "census.json")
    calls = 10 * tr.MAX_CALLS
    assert census is not None and census.calls == calls and census.flushes() == calls
    assert census.kernels["attention_fwd"] == calls + 1
    assert census_flag(census, calls) is None


GARBAGE = b"""import gc

import torch

IN_CALL = [False]
COLLECTED_IN_CALL = []
CALLS = [0]
FULL = []  # full collections so far, seen at the first timed call


def watch(phase, info):
    if phase == "start" and IN_CALL[0]:
        COLLECTED_IN_CALL.append(info["generation"])


gc.callbacks.append(watch)


def solve(Q, K, V, O, B, N, d):
    if COLLECTED_IN_CALL:
        raise RuntimeError(f"collections inside a call: {COLLECTED_IN_CALL}")
    if CALLS[0] == 1:
        FULL.append(gc.get_stats()[2]["collections"])
    if CALLS[0] == 1 + 64 and gc.get_stats()[2]["collections"] <= FULL[0]:
        raise RuntimeError("no collection after the first batch: the garbage stays")
    IN_CALL[0] = CALLS[0] > 0  # the first call is the untimed warm-up
    CALLS[0] += 1
    for _ in range(1000):  # reference cycles: 1000 allocations past gen 0's threshold of 700
        cycle = []
        cycle.append(cycle)
    IN_CALL[0] = False
    torch.LAUNCHES.append("attention_fwd")
"""


def test_pythons_garbage_collector_never_pauses_a_timed_call(
        tmp_path: Path, runner_env: dict[str, str]) -> None:
    """runner.cu has no collector; the Python runner's runs between batches (after DONE, while T
    checks), so a submission that leaves garbage is not timed with the collector's pauses (a
    full collection over torch's heap takes milliseconds). Its garbage is still collected."""
    sock, proc = start(tmp_path, GARBAGE, runner_env)
    assert tr.READY.unpack(sock.recv(4096))[2] == 1
    for request in range(4):
        sock.send(tr.RUN.pack(tr.MAGIC, tr.KIND_RUN, request, tr.MAX_CALLS,
                              *[0] * tr.MAX_CALLS))
        done = tr.DONE.unpack(sock.recv(4096))
        assert done[4] == 1, done[-1].rstrip(b"\0").decode()
    sock.send(struct.pack("<II", tr.MAGIC, tr.KIND_QUIT))
    sock.close()
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr


def test_a_call_counts_its_work_and_not_the_runners_own_end_of_a_call() -> None:
    """The runner's stop event follows a device-wide wait; the ~10 us of the host waking from it
    (measured on empty calls, here 0.011 ms) are not the submission's, its own work is."""
    assert tr.call_ms(full_ms=0.094, floor_ms=0.083, tail_ms=0.011) == pytest.approx(0.083)
    # work left on another stream when solve() returned keeps the wait waiting: it all counts
    assert tr.call_ms(full_ms=0.200, floor_ms=0.050, tail_ms=0.011) == pytest.approx(0.189)
    # a quick wake-up never takes a call below what ran on the runner's stream
    assert tr.call_ms(full_ms=0.088, floor_ms=0.083, tail_ms=0.011) == pytest.approx(0.083)


def test_a_file_that_does_not_import_is_a_compile_error(tmp_path: Path,
                                                         runner_env: dict[str, str]) -> None:
    sock, proc = start(tmp_path, b"def solve(Q, K, V, O, B, N, d:\n    pass\n", runner_env)
    ready = tr.READY.unpack(sock.recv(4096))
    assert ready[2] == 0 and b"SyntaxError" in ready[3]
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == tr.EXIT_COMPILE
    assert stderr.decode().strip().splitlines()[-1].startswith(
        "flashjudge-runner: solve.py does not import: SyntaxError")


@pytest.fixture(scope="module")
def sandbox() -> BwrapSandbox:
    found = BwrapSandbox()
    if not found.report.secure or found.report.host_uid is None:
        pytest.skip("needs bubblewrap run by root (the unprivileged sandbox uid)")
    return found


@pytest.fixture
def stand_ins(tmp_path: Path) -> Iterator[Path]:
    """The stand-in torch and libcuda where the sandbox's unprivileged uid can read them."""
    shared = make_workdir("fakes")
    shutil.copytree(FAKES, shared / "torch", ignore=shutil.ignore_patterns("__pycache__"))
    (shared / "lib").mkdir()
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(shared / "lib" / "libcuda.so.1"),
                    str(FAKES / "libcuda.c")], check=True)
    for path in [shared, *shared.rglob("*")]:
        path.chmod(0o755)
    yield shared
    remove_tree(shared)


@pytest.mark.parametrize("jit_reachable", [True, False], ids=["same-uid", "runner-as-worker-uid"])
def test_the_sandboxed_runner_reaches_the_sandboxed_timer(
        tmp_path: Path, sandbox: BwrapSandbox, stand_ins: Path, jit_reachable: bool) -> None:
    """The GPU path's timer and runner, minus the GPU: the runner's binds (a writable JIT cache,
    the Python's libraries) and environment as TritonKernel.run_test gives them."""
    if shutil.which("nvcc") is None:
        pytest.skip("needs nvcc (it builds the channel self-test)")
    artifacts = make_workdir("artifacts") if jit_reachable else tmp_path / "artifacts"
    artifacts.mkdir(exist_ok=True)
    if not jit_reachable:
        tmp_path.chmod(0o700)  # like the GPU test's mkdtemp: 65534 cannot reach the JIT cache
    product = artifacts / SOURCE
    product.write_bytes(SOLVE)
    (stand_ins / "input.bin").write_bytes(b"")  # where the timer's uid reaches, as InputCache's
    binds = (Bind(jit_cache(product), JIT_CACHE, writable=True),
             Bind(stand_ins / "torch", "/fakes/torch"), Bind(stand_ins / "lib", "/fakes/lib"))
    env = triton_runner_env({"LD_LIBRARY_PATH": "/nowhere", "PYTHONPATH": "/fakes/torch"})
    env["LD_LIBRARY_PATH"] = "/fakes/lib"
    programs = SplitPrograms(program_binary(tmp_path / "cache", "90", CHANNEL_SELFTEST),
                             Path(tr.__file__), product, "/usr/bin/python3", SOURCE, census=True)
    job = SplitJob(stand_ins / "input.bin", None, 10.0, 1.0,
                   Limits(wall_s=60, memory_bytes=1 << 30), {}, None, binds, env)
    try:
        run = run_split(sandbox, programs, job, "channel")
        assert run.report is not None, (run.report_error, run.timer, run.runner)
        assert run.report.runner == "ok", (run.report.runner, run.runner.stderr_tail[-1500:])
        assert run.runner.exit_code == 0, run.runner.stderr_tail[-1500:]
        assert run.census is not None and run.census.calls == 1
        for directory in run.scratch:
            remove_tree(directory)
    finally:
        if jit_reachable:
            remove_tree(artifacts)
