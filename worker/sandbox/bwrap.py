"""Run one untrusted command (a build or a test) in bubblewrap plus a fresh cgroup.

The one door between the judge and submitted code, for builds and runs alike. Each run gets new
user/pid/net/ipc/uts namespaces, uid 65534 (also on the host when the worker is root), a read-only
toolchain, a fresh /tmp, the caller's work dir at /work, a scrubbed environment, and its own cgroup
(memory, pids) joined before exec, so that on the wall-time limit every process it started, setsid
or not, is killed. Statuses are facts about the run; verdicts are the engine's business.
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from worker.machine import Machine
from worker.sandbox.cgroups import CgroupError, RunCgroup
from worker.sandbox.gpu.driver_gate import Freezer
from worker.sandbox.gpu.gpu_run import NO_INJECTION, GpuRun, GpuRuntime, gpu_runtime_for
from worker.sandbox.insecure import direct_command
from worker.sandbox.io import OutputPump, read_regular_file
from worker.sandbox.launch import Launcher, ready_argv
from worker.sandbox.mounts import (
    MountPlan,
    build_env,
    build_mounts,
    namespace_args,
)
from worker.sandbox.preflight import (
    SecurityReport,
    bwrap_environment,
    drop_to,
    preflight,
    reachable_by,
)
from worker.sandbox.stamped import stamped_channel
from worker.sandbox.status import describe, exit_code_from_status, run_status_of
from worker.sandbox.types import (
    Bind,
    GpuAccess,
    Limits,
    RunResult,
    RunStatus,
    Sandbox,
    SandboxUnavailable,
)
from worker.sandbox.warm import shared_warmer

__all__ = [
    "Bind", "BwrapSandbox", "GpuAccess", "Limits", "RunResult", "RunStatus", "Sandbox",
    "SandboxUnavailable", "SecurityReport", "preflight", "read_regular_file",
]

KILL_GRACE_S = 5.0
STARTUP_LIMIT_S = 10.0  # longest bwrap may take to set up before the program's limit starts


@dataclass
class Launch:
    """The process to start for one run."""

    cmd: list[str]  # bwrap's command line, or the program's own in insecure mode
    plan: MountPlan  # descriptors bwrap binds from (closed once it started)
    cwd: Path  # host cwd: the work dir in insecure mode; "/" for bwrap (which does --chdir
    # /work), so nothing of the judge's own directory reaches bwrap, pid 1 inside
    env: dict[str, str]  # the launched process's environment, never the worker's
    bwrap: bool  # whether the exit code comes through bwrap's status fd


def _child_setup(procs_files: list[str], file_size: int, host_uid: int | None) -> None:
    """Runs in the child between fork and exec: join the run's cgroup first, so nothing the
    program starts can escape it, then cap file sizes, forbid core dumps, drop host root.
    Only where worker.sandbox.launch's helpers are missing: a preexec_fn makes CPython fork()."""
    pid = str(os.getpid())
    for path in procs_files:
        with open(path, "w") as f:
            f.write(pid)
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    drop_to(host_uid)


def _give_to(workdir: Path, uid: int) -> None:
    """Hand the work dir and its contents to the sandbox's host uid (links left untouched)."""
    os.chown(workdir, uid, uid, follow_symlinks=False)
    for root, dirs, files in os.walk(workdir):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)


class BwrapSandbox:
    """Runs commands sandboxed (the Sandbox protocol); made once per worker (preflight runs here
    and may refuse)."""

    def __init__(
        self, *, gpu: GpuAccess | None = None, insecure: bool = False, bwrap: str | None = None,
        cgroup_root: str | None = None, gpu_runtime: GpuRuntime | None = None,
        run_cpus: str | None = None,
    ) -> None:
        self.report = preflight(insecure=insecure, bwrap=bwrap, cgroup_root=cgroup_root)
        self.gpu = gpu
        self.gpu_runtime = gpu_runtime if gpu is not None else None
        self.run_cpus = run_cpus  # the cores timed runs are held to (a cpuset list; None: any)
        self.insecure = insecure and not self.report.secure
        self.launcher = Launcher.find(self.report.bwrap, self.report.host_uid is not None)
        layout = self.report.cgroups
        self.warmer = shared_warmer(layout) if layout is not None else None

    @classmethod
    def for_machine(cls, machine: Machine, *, gpu: bool, insecure: bool = False,
                    gpu_runtime: GpuRuntime | None = None) -> BwrapSandbox:
        """The sandbox of `machine` (its bubblewrap, its cgroups), given its GPU when `gpu`: the
        device node of Machine.gpu (its minor, else its UUID looked up in /proc), or of what the
        worker was handed where no driver described a GPU; with it `gpu_runtime` (the node's
        driver gate, the census injection, the GPU watch)."""
        handed = machine.gpu
        access = None if not gpu else GpuAccess.for_visible_device(
            handed.uuid if handed else machine.gpu_device, handed.minor if handed else None)
        runtime = gpu_runtime or (gpu_runtime_for(machine) if gpu else None)
        return cls(gpu=access, insecure=insecure, bwrap=machine.bwrap,
                   cgroup_root=machine.cgroup_root, gpu_runtime=runtime,
                   run_cpus=machine.run_cpus)

    def run(
        self,
        argv: list[str],
        *,
        workdir: Path,
        limits: Limits,
        binds: Sequence[Bind] = (),
        env: Mapping[str, str] | None = None,
        network: bool = False,
    ) -> RunResult:
        """Run argv with cwd /work (= workdir on the host) under the limits; never raises for
        anything the program does. Failures of ours come back as SYSTEM_ERROR."""
        layout = self.report.cgroups
        try:
            cgroup = (RunCgroup(layout, limits.memory_bytes, limits.pids, timed=limits.timed,
                                cpus=self.run_cpus if limits.timed else None)
                      if layout else None)
        except (CgroupError, OSError) as exc:
            return _system_error(f"cannot create the run's cgroup: {exc}")
        if self.warmer is not None:
            self.warmer.started()
        gpu_run = self.gpu_runtime.run(Path(workdir)) if self.gpu_runtime is not None else None
        try:
            return self._run_in(cgroup, argv, Path(workdir), limits, binds, env, network,
                                gpu_run)
        except (OSError, subprocess.SubprocessError) as exc:
            if gpu_run is not None:
                gpu_run.abandon()
            return _system_error(f"sandbox failed: {exc}")
        finally:
            if self.warmer is not None:
                self.warmer.ended()
            if cgroup is not None:
                cgroup.kill_all()
                cgroup.remove()

    def _host_uid_for(self, workdir: Path, binds: Sequence[Bind]) -> int | None:
        """The host uid for this run: the unprivileged one when bwrap, running as it, can reach
        every path it must mount; else None (bwrap runs as the worker's root, the program as
        uid 65534 without capabilities: still sandboxed, one layer of hardening less)."""
        uid = self.report.host_uid
        if uid is None:
            return None
        paths = [(workdir.parent, False)]
        paths += [(Path(b.source), b.writable) for b in binds]
        return uid if all(reachable_by(path, uid, write) for path, write in paths) else None

    def _with_gpu_run(self, gpu_run: GpuRun | None, cgroup: RunCgroup | None,
                      binds: Sequence[Bind], env: Mapping[str, str] | None, host_uid: int | None,
                      ) -> tuple[list[Bind], dict[str, str], list[int]]:
        """The run's binds, environment and extra descriptors, with what a GPU run adds."""
        all_binds, all_env, fds = list(binds), dict(env or {}), list[int]()
        inject = all_env.pop(NO_INJECTION, None) is None
        if gpu_run is None:
            return all_binds, all_env, fds
        more, more_env, fds = gpu_run.prepare(host_uid if host_uid is not None else os.getuid(),
                                              inject)
        freezer = Freezer(cgroup.freeze, cgroup.thaw) if cgroup and cgroup.can_freeze else None
        gate_env, gate_fds = gpu_run.gate_env(freezer)
        return [*all_binds, *more], {**all_env, **more_env, **gate_env}, [*fds, *gate_fds]

    def _launch(self, argv: list[str], workdir: Path, binds: Sequence[Bind],
                env: Mapping[str, str] | None, network: bool, status_fd: int) -> Launch:
        """What to start: bwrap with its mounts, or (insecure, no bwrap) the program itself."""
        if self.report.bwrap is None or not self.report.user_namespaces:
            cmd, host_env = direct_command(argv, workdir, binds, env)
            return Launch(cmd=cmd, plan=MountPlan(), cwd=workdir, env=host_env, bwrap=False)
        plan = build_mounts(workdir=workdir, binds=binds, gpu=self.gpu)
        cmd = [self.report.bwrap, *namespace_args(network=network), *plan.args]
        cmd += [*build_env(env), "--json-status-fd", str(status_fd), "--", *ready_argv(argv)]
        return Launch(cmd=cmd, plan=plan, cwd=Path("/"),
                      env=bwrap_environment(self.report.bwrap), bwrap=True)

    def _spawn_argv(self, launch: Launch, cgroup: RunCgroup | None, limits: Limits,
                    host_uid: int | None) -> tuple[list[str], Callable[[], None] | None]:
        """The command line to start and the preexec_fn it needs: none through the launcher (so
        CPython vfork()s), _child_setup where a helper program is missing."""
        procs = cgroup.procs_files() if cgroup else []
        if self.launcher is not None:
            return self.launcher.argv(launch.cmd, procs, limits.file_size_bytes, host_uid), None
        return launch.cmd, partial(_child_setup, procs, limits.file_size_bytes, host_uid)

    def _run_in(self, cgroup: RunCgroup | None, argv: list[str], workdir: Path, limits: Limits,
                binds: Sequence[Bind], env: Mapping[str, str] | None, network: bool,
                gpu_run: GpuRun | None) -> RunResult:
        host_uid = self._host_uid_for(workdir, binds)
        _give_to(workdir, os.getuid() if host_uid is None else host_uid)
        binds, env, extra_fds = self._with_gpu_run(gpu_run, cgroup, binds, env, host_uid)
        status_r, status_w = stamped_channel()  # stamped when written: worker/sandbox/stamped.py
        ready_r, ready_w = stamped_channel()
        try:
            launch = self._launch(argv, workdir, binds, env, network, status_w)
            cmd, setup = self._spawn_argv(launch, cgroup, limits, host_uid)
            start = time.monotonic()
            try:
                proc = subprocess.Popen(
                    cmd, stdin=ready_w if launch.bwrap else subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=launch.cwd,
                    env=launch.env, pass_fds=[status_w, *launch.plan.fds, *extra_fds],
                    preexec_fn=setup, start_new_session=True,
                )
            finally:
                launch.plan.close()
                os.close(status_w)
                os.close(ready_w)
            if gpu_run is not None:
                gpu_run.started(cgroup.pids if cgroup else lambda: [proc.pid])
            return self._supervise(proc, cgroup, limits, start, (status_r, ready_r), launch.bwrap,
                                   gpu_run)
        finally:
            os.close(status_r)
            os.close(ready_r)

    def _supervise(self, proc: subprocess.Popen[bytes], cgroup: RunCgroup | None, limits: Limits,
                   start: float, fds: tuple[int, int], bwrap: bool,
                   gpu_run: GpuRun | None) -> RunResult:
        """Wait for the run within its limits, kill what is left, and say what happened. `fds`:
        bwrap's status channel and the ready channel (the program's pid, just before its exec),
        both stamped when written (worker/sandbox/stamped.py)."""
        pump = OutputPump(proc, limits.log_tail_bytes, *(fds if bwrap else (None, None)))
        if not bwrap:
            pump.ready.ready_at = time.monotonic()  # no sandbox to wait for: it runs now
        frozen = gpu_run.frozen_s if gpu_run is not None else None
        exited = pump.wait(limits.wall_s, start, STARTUP_LIMIT_S, frozen)
        noticed = time.monotonic()
        emptied = cgroup.kill_all(KILL_GRACE_S) if cgroup else _kill_group(proc)
        proc.wait()
        pump.drain()
        pump.close()
        ready = pump.ready.ready_at  # when the line was written, even if read only now
        end = exit_written(pump, bwrap, exited) or noticed
        gpu = gpu_run.finished(pump.ready.pid()) if gpu_run is not None else None
        off_clock = gpu.gate.frozen_s if gpu is not None else 0.0
        if bwrap:
            code = exit_code_from_status(bytes(pump.status.data)) if exited else None
        else:
            code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
        oom = cgroup.oom_killed() if cgroup else False
        status, sig = run_status_of(code, timed_out=not exited, oom=oom)
        message = describe(status, code, sig, limits, pump.stderr.text())
        if ready is None and not exited:
            status = RunStatus.SYSTEM_ERROR
            message = f"the sandbox did not start the program within {STARTUP_LIMIT_S:g} s"
        if not emptied:
            status, message = RunStatus.SYSTEM_ERROR, "processes survived the kill of the run"
        if self.insecure:
            message = f"INSECURE ({'; '.join(self.report.problems)}): {message}"
        return RunResult(
            status=status, exit_code=code if sig is None else None, signal=sig,
            wall_s=end - (ready if ready is not None else start) - off_clock,
            setup_s=(ready if ready is not None else end) - start,
            stdout_tail=pump.stdout.text(), stderr_tail=pump.stderr.text(),
            memory_peak_bytes=cgroup.memory_peak() if cgroup else None, message=message,
            output_truncated=pump.stdout.truncated or pump.stderr.truncated, gpu=gpu,
            clock=(ready, end) if ready is not None else None,
        )


def exit_written(pump: OutputPump, bwrap: bool, exited: bool) -> float | None:
    """When bubblewrap wrote the program's exit code (its status channel's last record), if it
    did: the program's end, however late the supervisor woke to it (None: no such record)."""
    if not (bwrap and exited and b'"exit-code"' in bytes(pump.status.data)):
        return None
    return pump.status.last_at


def _system_error(message: str) -> RunResult:
    return RunResult(
        status=RunStatus.SYSTEM_ERROR, exit_code=None, signal=None, wall_s=0.0, stdout_tail="",
        stderr_tail="", memory_peak_bytes=None, message=message,
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> bool:
    """Without cgroups (insecure mode) the best we can do: kill the process group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, 9)
    return True
