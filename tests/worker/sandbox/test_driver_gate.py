"""The node's driver gate with real processes in real sandboxes: programs that speak the gate's
protocol as the judge's CUDA injection does ('S' when start-up is over, 'T' then a wait for 'G'
when teardown begins), two runs at once sharing one gate as two GPUs of a node do.

No GPU here: the runs are "GPU runs" without device nodes, which is all the gate needs. The
programs stamp CLOCK_MONOTONIC (the sandbox shares the host's clock) at each step, so the tests
read from the programs themselves whether their start-ups and teardowns ever overlapped.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.worker.sandbox.sandbox_helpers import processes_named, run_binary
from worker.sandbox.bwrap import BwrapSandbox, GpuAccess, Limits, RunResult, RunStatus
from worker.sandbox.gpu.driver_gate import DriverGate
from worker.sandbox.gpu.gpu_run import GpuRuntime
from worker.settings import WorkerSettings

# gate_program STARTUP_MS WORK_MS [never-started] [no-teardown]: say 'I' and wait for 'G', "start
# up" for STARTUP_MS, say 'S', work WORK_MS, say 'T', wait for 'G', "tear down" for 50 ms, exit.
# A second thread stamps its loop; the largest gap it saw shows whether the process stood frozen.
# Prints its stamps.
GATE_PROGRAM = r"""
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + t.tv_nsec * 1e-9; }
static volatile int done; static double gap;
static void *ticker(void *a) { double last = now(); (void)a;
  while (!done) { double t = now(); if (t - last > gap) gap = t - last; last = t; usleep(1000); }
  return NULL; }
static void spend(int ms) { double end = now() + ms / 1000.0; while (now() < end) usleep(1000); }
int main(int argc, char **argv) {
  double asked = now(), start = 0, said_s = 0, said_t = 0, got_g = 0;
  int fd = getenv("FLASHJUDGE_GATE_FD") ? atoi(getenv("FLASHJUDGE_GATE_FD")) : -1;
  int never_started = argc > 3 && !strcmp(argv[3], "never-started");
  int no_teardown = argc > 3 && !strcmp(argv[argc - 1], "no-teardown");
  struct pollfd p = {fd, POLLIN, 0}; char g;
  pthread_t th; pthread_create(&th, NULL, ticker, NULL);
  write(fd, "I", 1);
  if (poll(&p, 1, 20000) == 1 && read(fd, &g, 1) == 1) start = now();
  spend(atoi(argv[1]));
  if (!never_started) { said_s = now(); write(fd, "S", 1); }  /* stamped before the gate opens */
  spend(atoi(argv[2]));
  if (!no_teardown) {
    said_t = now(); write(fd, "T", 1);
    if (poll(&p, 1, 20000) == 1 && read(fd, &g, 1) == 1) got_g = now();
  }
  spend(50);
  done = 1; pthread_join(th, NULL);
  printf("%f %f %f %f %f %f %f\n", asked, start, said_s, said_t, got_g, now(), gap);
  return 0;
}
"""


class Stamps:
    """What a gate program printed: its steps on the monotonic clock, and its ticker's gap."""

    def __init__(self, result: RunResult) -> None:
        assert result.status is RunStatus.OK, result
        values = [float(v) for v in result.stdout_tail.split()]
        self.asked, self.start, self.said_s, self.said_t, self.got_g, self.end, self.gap = values

    def heavy(self) -> list[tuple[float, float]]:
        """Its start-up and its teardown, the two phases the gate keeps apart."""
        phases = [(self.start, self.said_s or self.said_t or self.end)]
        if self.got_g:
            phases.append((self.got_g, self.end))
        return phases


def overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    return max(max(0.0, min(x1, y1) - max(x0, y0)) for x0, x1 in a for y0, y1 in b)


@pytest.fixture
def gated(tmp_path: Path) -> Callable[..., BwrapSandbox]:
    """A sandbox whose runs count as GPU runs (no device nodes) through a gate in tmp_path."""
    machine = WorkerSettings().machine()

    def make(**gate: float) -> BwrapSandbox:
        runtime = GpuRuntime(gate=DriverGate(tmp_path / "locks", **gate))
        return BwrapSandbox(gpu=GpuAccess(device_nodes=()), bwrap=machine.bwrap,
                            cgroup_root=machine.cgroup_root, gpu_runtime=runtime)

    return make


@pytest.fixture
def program(compile_c: Callable[[str, str], Path]) -> Path:
    return compile_c("gate_program", GATE_PROGRAM)


def gate_taken(gate_file: Path) -> bool:
    """Whether some run holds the gate now (a non-blocking try on the same lock)."""
    if not gate_file.exists():
        return False
    fd = os.open(gate_file, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def run_at_once(sandbox: BwrapSandbox, program: Path, tmp_path: Path, *argvs: list[str],
                in_order: bool = False) -> list[RunResult]:
    """Each argv in its own thread, all sharing the sandbox (and so the gate). `in_order`: each
    run starts once the one before it has taken the gate (or 2 s passed)."""
    results: list[RunResult | None] = [None] * len(argvs)

    def one(i: int, args: list[str]) -> None:
        work = tmp_path / f"w{i}"
        work.mkdir()
        results[i] = run_binary(sandbox, program, work, *args, limits=Limits(wall_s=20))

    threads = [threading.Thread(target=one, args=(i, a)) for i, a in enumerate(argvs)]
    for t in threads:
        t.start()
        deadline = time.monotonic() + 2.0
        while in_order and not gate_taken(tmp_path / "locks" / "driver.gate"):
            if time.monotonic() > deadline:
                break
    for t in threads:
        t.join()
    return [r for r in results if r is not None]


def test_start_ups_and_teardowns_of_two_runs_never_overlap(
        gated: Callable[..., BwrapSandbox], program: Path, tmp_path: Path) -> None:
    sandbox = gated()
    runs = run_at_once(sandbox, program, tmp_path, ["300", "100"], ["300", "100"])
    a, b = (Stamps(r) for r in runs)
    assert overlap(a.heavy(), b.heavy()) == 0.0, (a.heavy(), b.heavy())
    waits = sorted(r.gpu.gate.startup_wait_s for r in runs if r.gpu)
    assert waits[1] > 0.2  # the second stood frozen through the first's start-up
    for run, stamps in zip(runs, (a, b), strict=True):
        assert run.gpu is not None and run.gpu.gate.said == ["I", "S", "T"]
        own = stamps.end - stamps.asked - run.gpu.gate.frozen_s  # its life less its waits
        assert abs(run.wall_s - own) < 0.05, (run.wall_s, own)


def test_a_teardown_waits_frozen_and_the_wait_is_off_its_time(
        gated: Callable[..., BwrapSandbox], program: Path, tmp_path: Path) -> None:
    """B tears down while A is inside a long start-up: B stands frozen (its own ticker saw the
    gap) until A is through, and B's time does not count the wait."""
    sandbox = gated(startup_bound_s=5.0)
    runs = run_at_once(sandbox, program, tmp_path, ["100", "400"], ["1500", "0"], in_order=True)
    b_run, a_run = runs  # B takes the gate first and tears down at 0.5 s; A then holds 1.5 s
    b, a = Stamps(b_run), Stamps(a_run)
    assert b_run.gpu is not None
    wait = b_run.gpu.gate.teardown_wait_s
    assert a.start < b.said_t < a.said_s  # B's teardown came inside A's start-up
    assert wait > 0.5
    assert b.gap > 0.8 * wait  # every thread of B stood still meanwhile
    assert b.got_g >= a.said_s  # the gate was B's only once A's start-up was over
    assert b_run.wall_s < b.end - b.asked - 0.8 * wait + 0.05


def test_a_program_that_never_says_started_holds_the_gate_only_to_the_bound(
        gated: Callable[..., BwrapSandbox], program: Path, tmp_path: Path) -> None:
    sandbox = gated(startup_bound_s=0.3)
    runs = run_at_once(sandbox, program, tmp_path, ["0", "1500", "never-started"],
                       ["0", "0"])
    silent, other = runs
    assert silent.gpu is not None and other.gpu is not None
    assert other.gpu.gate.startup_wait_s < 1.0  # not the silent run's whole 1.5 s
    assert any("bound" in note for note in silent.gpu.gate.notes)


def test_a_run_that_exits_without_a_teardown_gives_the_gate_back(
        gated: Callable[..., BwrapSandbox], program: Path, tmp_path: Path) -> None:
    sandbox = gated()
    first = run_at_once(sandbox, program, tmp_path, ["0", "0", "no-teardown"])[0]
    assert first.gpu is not None and first.gpu.gate.said == ["I", "S"]
    again = tmp_path / "again"
    again.mkdir()
    second = run_binary(sandbox, program, again, "0", "0", limits=Limits(wall_s=10))
    assert second.gpu is not None and second.gpu.gate.startup_wait_s < 0.5
    assert os.listdir(tmp_path / "locks") == ["driver.gate"]


FORKING = r"""
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
  if (argc > 1 && fork() == 0) { usleep(300000); return 0; }
  usleep(300000);
  wait(NULL);
  return 0;
}
"""


@pytest.mark.parametrize("forks", [False, True])
def test_the_watch_tells_the_started_program_from_any_other_process_of_the_run(
        compile_c: Callable[[str, str], Path], workdir: Path, forks: bool) -> None:
    """With NVML's list stood in for by "every process running this binary", the watch keeps
    the run's processes with their pids inside the sandbox, and names the program's child as
    another process: what the judge calls a second process on the GPU."""
    binary = compile_c("watch_forks", FORKING)

    def on_gpu() -> set[int]:
        return set(processes_named(binary.name))

    machine = WorkerSettings().machine()
    sandbox = BwrapSandbox(gpu=GpuAccess(device_nodes=()), bwrap=machine.bwrap,
                           cgroup_root=machine.cgroup_root,
                           gpu_runtime=GpuRuntime(list_pids=on_gpu))
    args = ["child"] if forks else []
    result = run_binary(sandbox, binary, workdir, *args)
    assert result.status is RunStatus.OK, result
    assert result.gpu is not None and result.gpu.watched
    assert result.gpu.program_pid is not None
    pids = {p.sandbox_pid for p in result.gpu.processes}
    assert result.gpu.program_pid in pids
    others = result.gpu.others()
    if forks:
        assert len(others) == 1 and others[0].command == binary.name[:15]
        assert others[0].sandbox_pid != result.gpu.program_pid
    else:
        assert others == []
