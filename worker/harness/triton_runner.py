"""flashjudge-pyrunner: the student's side (S) of a timed triton-kernel run, in Python.

    python3 flashjudge-pyrunner --connect SOCKET (solve.py | --builtin) [--census FILE]

The Python twin of runner.cu, speaking the same protocol (protocol.cuh) to the same trusted timer
T: it maps T's shared allocation (the file descriptor of HELLO, imported with the driver's virtual
memory API through ctypes), wraps each slot's Q, K, V, O as torch tensors over that memory (no
copy), imports the student's solve.py, calls solve() once untimed so that Triton's JIT compilation
and any autotuning happen before READY (their time goes to stderr as `flashjudge-jit: S s`, which
the judge shows apart from the timed figure), then serves RUN requests timing each call as
runner.cu does: an L2 flush (longer: FLUSH_L2_TIMES), a start event on the default stream,
solve(), a device synchronize, a stop event; less the runner's own end of a call (the host
waking from that wait to record the stop event), measured on empty calls before the student's
file is imported (`call_ms`). Python's garbage collector runs between batches, never inside a
timed call (`collect_between`).

With --census (where the suite's rule asks), a CUDA profiler (torch.profiler over CUPTI) starts
before the student's file is imported; at QUIT the names and counts of every kernel the GPU ran in
this process go to the census file, which the judge checks against the suite's rule on borrowed
kernels (worker/harness/census.py). Nothing here is trusted: the student's code shares the
process. T times and checks everything; the census is evidence against a submission that calls
a library (however it hides the call), not against one that attacks the census itself, and the
judge holds a census whose count of our own per-call flush kernels falls short of the calls T
requested.

Standalone on purpose (it runs in the sandbox under the system Python with torch and triton):
it imports nothing from flashjudge. Exit codes as runner.cu: 0 after QUIT, 2 our own set-up
failed, 3 solve.py has no solve(), 4 an error in solve(), 5 a compile error (Python or Triton).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib.util
import json
import os
import select
import socket
import struct
import sys
import threading
import time
import traceback
from typing import Any, NoReturn

MAGIC = 0x31544A46  # "FJT1"
KIND_HELLO, KIND_READY, KIND_RUN, KIND_DONE, KIND_QUIT = 1, 2, 3, 4, 5
MAX_CALLS = 64
HELLO = struct.Struct("<IIiiiIQQQ")  # header, B, N, d, slots, pool_bytes, slot/tensor strides
READY = struct.Struct("<IIi240s")  # header, ok, text
RUN = struct.Struct(f"<IIII{MAX_CALLS}I")  # header, batch, calls, slots
DONE = struct.Struct(f"<IIIIi{MAX_CALLS}f240s")  # header, batch, calls, ok, event ms, text
EXIT_SETUP, EXIT_LIBRARY, EXIT_SOLVE, EXIT_COMPILE = 2, 3, 4, 5
SPIN_FOR_RUN_S = 0.1  # spin before blocking while waiting for RUN (see protocol.cuh)
CONNECT_TRIES = 1500  # x 20 ms
HELLO_TIMEOUT_S = 60.0
FLUSH_VALUE_MASK = 0xFF
QUITTING = threading.Event()  # set at QUIT: the watchdog no longer ends the process
QUIT_GRACE_S = 1.0  # T hangs up right after QUIT: the main thread has this long to notice it


def fail(sock: socket.socket | None, code: int, what: str) -> NoReturn:
    """Say why on stderr (its last line is the judge's message) and to T, then exit."""
    sys.stderr.write(f"flashjudge-runner: {what}\n")
    sys.stderr.flush()
    if sock is not None:
        say(sock, False, what)
    os._exit(code)


def say(sock: socket.socket, ok: bool, text: str) -> None:
    data = text.encode("utf-8", "replace")[:239]
    with contextlib.suppress(OSError):
        sock.send(READY.pack(MAGIC, KIND_READY, 1 if ok else 0, data))


def open_channel(path: str) -> socket.socket:
    """Connect to T's socket, retrying while it does not exist yet."""
    last: OSError | None = None
    for _ in range(CONNECT_TRIES):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sock.connect(path)
            return sock
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            last = exc
            sock.close()
            time.sleep(0.02)
    fail(None, EXIT_SETUP, f"cannot connect: {last}")


def watchdog(sock: socket.socket) -> None:
    """End the process once T hangs up (unless we are writing the census after QUIT)."""
    def watch() -> None:
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLRDHUP)
        while True:
            for _, events in poller.poll():
                if events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    if not QUITTING.wait(QUIT_GRACE_S):
                        os._exit(0)
                    return
    threading.Thread(target=watch, daemon=True, name="watchdog").start()


def recv_hello(sock: socket.socket) -> tuple[tuple[Any, ...], int]:
    sock.settimeout(HELLO_TIMEOUT_S)
    try:
        msg, fds, _, _ = socket.recv_fds(sock, 4096, 4)
    except OSError as exc:
        fail(sock, EXIT_SETUP, f"no HELLO from the timer: {exc}")
    sock.settimeout(None)
    if len(msg) != HELLO.size or not fds:
        fail(sock, EXIT_SETUP, "no valid HELLO from the timer")
    hello = HELLO.unpack(msg)
    if hello[0] != MAGIC or hello[5] == 0:
        fail(sock, EXIT_SETUP, "no valid HELLO from the timer")
    for extra in fds[1:]:
        os.close(extra)
    return hello, fds[0]


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


def import_pool(fd: int, size: int, device: int) -> int:
    """The allocation behind `fd`, mapped read-write into this process (shared_pool.cuh's
    import_pool through ctypes); its device address. Raises RuntimeError naming the call."""
    cuda = ctypes.CDLL("libcuda.so.1")
    handle, ptr = ctypes.c_ulonglong(), ctypes.c_ulonglong()

    def check(result: int, what: str) -> None:
        if result != 0:
            raise RuntimeError(f"{what} failed (CUresult {result})")

    check(cuda.cuMemImportFromShareableHandle(ctypes.byref(handle), ctypes.c_void_p(fd),
                                              ctypes.c_int(1)), "cuMemImportFromShareableHandle")
    check(cuda.cuMemAddressReserve(ctypes.byref(ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
                                   ctypes.c_ulonglong(0), ctypes.c_ulonglong(0)),
          "cuMemAddressReserve")
    check(cuda.cuMemMap(ptr, ctypes.c_size_t(size), ctypes.c_size_t(0), handle,
                        ctypes.c_ulonglong(0)), "cuMemMap")
    desc = _AccessDesc(_Location(1, device), 3)  # DEVICE, PROT_READWRITE
    check(cuda.cuMemSetAccess(ptr, ctypes.c_size_t(size), ctypes.byref(desc), ctypes.c_size_t(1)),
          "cuMemSetAccess")
    return int(ptr.value)


class _Memory:
    """A float32 (B, N, d) array at a device address, for torch.as_tensor (no copy)."""

    def __init__(self, address: int, shape: tuple[int, int, int]) -> None:
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4",
                                         "data": (address, False), "version": 2, "strides": None}


def over(torch: Any, address: int, shape: tuple[int, int, int]) -> Any:
    """A torch tensor over device memory we mapped: through __cuda_array_interface__, or where
    torch refuses that pointer, through CuPy's unowned memory and DLPack."""
    try:
        return torch.as_tensor(_Memory(address, shape), device="cuda")
    except Exception:
        import cupy
        size = shape[0] * shape[1] * shape[2] * 4
        memory = cupy.cuda.UnownedMemory(address, size, None)
        array = cupy.ndarray(shape, cupy.float32, cupy.cuda.MemoryPointer(memory, 0))
        return torch.from_dlpack(array)


def slot_tensors(torch: Any, hello: tuple[Any, ...], base: int) -> list[tuple[Any, ...]]:
    """(Q, K, V, O) of every slot as torch tensors over the shared memory."""
    _, _, b, n, d, slots, _, slot_stride, tensor_stride = hello
    shape = (b, n, d)
    return [tuple(over(torch, base + s * slot_stride + t * tensor_stride, shape)
                  for t in range(4)) for s in range(slots)]


def start_census(torch: Any) -> Any:
    """A CUDA-only profiler started before any student code runs (None where it cannot)."""
    try:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CUDA])
        prof.start()
        return prof
    except Exception as exc:  # the judge sees no census and says so
        sys.stderr.write(f"flashjudge-census: not started ({exc})\n")
        return None


def device_counts(prof: Any) -> dict[str, int]:
    """Launches per name of every GPU-side event (kernel, memset, memcpy), read from the
    profiler's events in memory: no trace file, whose size the sandbox's file-size limit (the
    test's output size) caps long before a long run's thousands of calls are written."""
    counts: dict[str, int] = {}
    for event in prof.events():
        if str(getattr(event, "device_type", "")).endswith("CUDA"):
            name = str(event.name)
            counts[name] = counts.get(name, 0) + 1
    return counts


def write_census(prof: Any, path: str, calls: int) -> None:
    """Every GPU kernel (and memset/memcpy) this process ran, by name, with counts."""
    if prof is None or not path:
        return
    counts: dict[str, int] = {}
    try:
        prof.stop()
        counts = device_counts(prof)
    except Exception as exc:
        sys.stderr.write(f"flashjudge-census: {exc}\n")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"kernels": counts, "calls": calls}, f)
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:6]
    sys.stderr.write(f"flashjudge-census: {len(counts)} kernels, {calls} calls: "
                     + "; ".join(f"{n} x{c}" for c, n in ((c, n[:90]) for n, c in top)) + "\n")


def load_solve(sock: socket.socket, path: str) -> Any:
    """The student's solve(); a failure to import is a compile error (Python's message)."""
    if path == "--builtin":
        return lambda q, k, v, o, b, n, d: o.zero_()
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec = importlib.util.spec_from_file_location("solve", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except BaseException as exc:  # SyntaxError, ImportError, anything raised at import
        traceback.print_exc()
        fail(sock, EXIT_COMPILE, f"solve.py does not import: {type(exc).__name__}: {exc}")
    solve = getattr(module, "solve", None)
    if not callable(solve):
        fail(sock, EXIT_LIBRARY, "solve.py defines no solve(Q, K, V, O, B, N, d)")
    return solve


def compile_errors() -> tuple[type[BaseException], ...]:
    """Triton's compile-time errors (a CE, not an RE), where triton imports."""
    found: list[type[BaseException]] = []
    try:
        from triton.compiler.errors import CompilationError
        found.append(CompilationError)
        from triton.runtime.errors import OutOfResources
        found.append(OutOfResources)
    except Exception:
        pass
    return tuple(found)


def warm_up(sock: socket.socket, torch: Any, solve: Any, tensors: tuple[Any, ...],
            shape: tuple[int, int, int]) -> None:
    """One untimed call: Triton compiles (and autotunes) here, before T times anything."""
    started = time.perf_counter()
    try:
        solve(*tensors, *shape)
        torch.cuda.synchronize()
    except compile_errors() as exc:
        traceback.print_exc()
        fail(sock, EXIT_COMPILE, f"Triton could not compile: {str(exc).strip().splitlines()[-1]}")
    except BaseException as exc:
        traceback.print_exc()
        fail(sock, EXIT_SOLVE, f"solve() failed on its first call: {type(exc).__name__}: {exc}")
    sys.stderr.write(f"flashjudge-jit: {time.perf_counter() - started:.3f} s\n")


# The flush writes 4x the L2 (runner.cu: 2x). Before a call's kernel reaches the GPU this runner
# spends 40-90 us of Python (its own set_stream, fill_ and event, then Triton's launcher in solve),
# against runner.cu's few; behind a 2x flush (~40 us on an H100) the GPU then idles between the
# start event and the kernel, and the figure counts that wait, 1-4% of calls by 20-100 us more
# (bench/triton_runner_noise.py). 4x hides it on nearly every call, as do_bench's 256 MB does, and
# leaves a kernel launched on a stream of its own about the head start behind the flush that
# runner.cu's 2x leaves a CUDA one (forgers-triton/flush-overlap).
FLUSH_L2_TIMES = 4
TAIL_CALLS = 64  # empty calls measured for the end-of-call cost, before solve.py is imported


def call_ms(full_ms: float, floor_ms: float, tail_ms: float) -> float:
    """One call's figure: start to stop (after the device-wide wait) less the runner's own end of
    a call, never less than start to the mark behind solve()'s last launch on our stream. Work
    left running on another stream after solve() returns still counts in full: it keeps the wait,
    hence the stop event, waiting. What is taken off is measured on empty calls, the same for
    every submission (docs/kernel-timing.md: the ~10 us that set this runner apart from
    triton.testing.do_bench on the smallest tests)."""
    return max(floor_ms, full_ms - tail_ms)


class Timing:
    """runner.cu's timed_call: L2 flushed, events around solve() and a device-wide wait; less the
    wait's own end (the host waking and recording the stop event), calibrated on empty calls."""

    def __init__(self, torch: Any, flush_l2_times: int = FLUSH_L2_TIMES) -> None:
        self.torch = torch
        self.stream = torch.cuda.default_stream()
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or (64 << 20)
        self.flush = torch.empty(flush_l2_times * l2, dtype=torch.uint8, device="cuda")
        self.start = torch.cuda.Event(enable_timing=True)
        self.mark = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)
        # Taken before solve.py is imported: a student who replaces torch.cuda.synchronize (to
        # return before work left on another stream is done) does not replace the runner's wait.
        self.device_wait = (getattr(getattr(torch, "_C", None), "_cuda_synchronize", None)
                            or torch.cuda.synchronize)
        self.tail_ms = 0.0
        self.tail_ms = self.calibrate()

    def calibrate(self) -> float:
        """The median end of an empty call: start (behind the flush), the wait, stop."""
        ends = sorted(self.call(lambda: None, (), (), i) for i in range(TAIL_CALLS))
        return ends[len(ends) // 2]

    def call(self, solve: Any, tensors: tuple[Any, ...], shape: tuple[int, ...],
             slot: int) -> float:
        torch = self.torch
        torch.cuda.set_stream(self.stream)  # the student may have left another one current
        self.flush.fill_(slot & FLUSH_VALUE_MASK)
        self.start.record(self.stream)
        solve(*tensors, *shape)
        self.mark.record(self.stream)
        self.device_wait()
        self.stop.record(self.stream)
        self.stop.synchronize()
        return call_ms(float(self.start.elapsed_time(self.stop)),
                       float(self.start.elapsed_time(self.mark)), self.tail_ms)


def wait_run(sock: socket.socket) -> bytes:
    """The next request: spin for SPIN_FOR_RUN_S, then block."""
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    deadline = time.perf_counter() + SPIN_FOR_RUN_S
    while time.perf_counter() < deadline and not poller.poll(0):
        pass
    try:
        return sock.recv(RUN.size + 1)
    except OSError:
        return b""


def collect_between() -> None:
    """Keep Python's collector out of the timed calls: what torch, Triton and solve.py built
    before READY is frozen (never scanned again), automatic collection is off, and serve()
    collects the rest after each batch's answer, while T checks the outputs. runner.cu has no
    collector; left to itself, Python's would pause a call now and then (a full collection over
    torch's heap takes milliseconds) and make a Triton kernel's figure noisier than the same
    kernel's in CUDA."""
    gc.collect()
    gc.freeze()
    gc.disable()


def serve(sock: socket.socket, solve: Any, timing: Timing, tensors: list[tuple[Any, ...]],
          shape: tuple[int, int, int]) -> int:
    """Answer RUN requests until QUIT (or T hangs up); the number of calls served."""
    served = 0
    collect_between()
    while True:
        msg = wait_run(sock)
        if len(msg) != RUN.size:
            QUITTING.set()
            return served
        run = RUN.unpack(msg)
        if run[1] == KIND_QUIT or run[0] != MAGIC or not 0 < run[3] <= MAX_CALLS:
            QUITTING.set()
            return served
        batch, calls, slots = run[2], run[3], run[4:4 + run[3]]
        times, ok, text = [0.0] * MAX_CALLS, 1, b""
        for i, slot in enumerate(slots):
            slot = slot if slot < len(tensors) else 0
            try:
                times[i] = timing.call(solve, tensors[slot], shape, slot)
                served += 1
            except BaseException as exc:
                traceback.print_exc()
                ok, text = 0, f"solve(): {type(exc).__name__}: {exc}".encode()[:239]
                break
        sock.send(DONE.pack(MAGIC, KIND_DONE, batch, calls, ok, *times, text))
        if not ok:
            fail(None, EXIT_SOLVE, text.decode("utf-8", "replace"))
        gc.collect()


def arguments(argv: list[str]) -> tuple[str, str, str]:
    """(socket path, solve.py or --builtin, census file or "")."""
    if len(argv) not in (4, 6) or argv[1] != "--connect" or (len(argv) == 6
                                                               and argv[4] != "--census"):
        fail(None, EXIT_SETUP, "usage: flashjudge-pyrunner --connect PATH (FILE | --builtin) "
                               "[--census FILE]")
    return argv[2], argv[3], argv[5] if len(argv) == 6 else ""


def gate(byte: bytes, wait: bool) -> None:
    """The node's driver gate (worker/sandbox/gpu/driver_gate.py), spoken as the judge's CUDA
    injection speaks it for other programs ('I' before cuInit, 'S' once the context exists, 'T'
    before teardown; after 'I' and 'T' the gate's 'G'): this process keeps CUPTI for its own
    census, so the injection is not loaded here."""
    fd = int(os.environ.get("FLASHJUDGE_GATE_FD", "-1") or -1)
    if fd < 0:
        return
    with contextlib.suppress(OSError):
        os.write(fd, byte)
        if wait and select.select([fd], [], [], 120.0)[0]:
            os.read(fd, 1)


def set_up(sock: socket.socket) -> tuple[Any, tuple[Any, ...], list[tuple[Any, ...]]]:
    """torch, HELLO and the slots' tensors over T's memory (a failure here is ours: exit 2)."""
    hello, fd = recv_hello(sock)
    try:
        import torch
        gate(b"I", wait=True)
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # the primary context, current on this thread
        gate(b"S", wait=False)
        base = import_pool(fd, hello[6], torch.cuda.current_device())
        os.close(fd)
        return torch, hello, slot_tensors(torch, hello, base)
    except Exception as exc:
        traceback.print_exc()
        fail(sock, EXIT_SETUP, f"cannot map the timer's memory into torch: {exc}")


def main(argv: list[str]) -> None:
    started = time.perf_counter()
    path, library, census_path = arguments(argv)
    sock = open_channel(path)
    watchdog(sock)
    torch, hello, tensors = set_up(sock)
    sys.stderr.write(f"flashjudge-setup: torch and the pool in {time.perf_counter() - started:.2f}"
                     " s\n")
    shape = (hello[2], hello[3], hello[4])
    timing = Timing(torch)  # calibrated before the census starts: its flushes are not counted
    prof = start_census(torch) if census_path else None
    solve = load_solve(sock, library)
    warm_up(sock, torch, solve, tensors[0], shape)
    say(sock, True, "ready")
    served = serve(sock, solve, timing, tensors, shape)
    write_census(prof, census_path, served)
    sys.stderr.flush()
    with contextlib.suppress(Exception):
        torch.cuda.synchronize()
    gate(b"T", wait=True)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
