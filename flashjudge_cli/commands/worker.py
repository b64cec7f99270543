"""`flashjudge worker`: judge workers, one Celery process per GPU (or the control worker).

Each GPU gets its own process pinned with CUDA_VISIBLE_DEVICES, concurrency 1 (cgroups do not
cap GPU memory, so one job per GPU). `--control` runs the worker that records results next to
the database instead.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from flashjudge_cli.commands.machine import judge_gpus
from worker.celery_adapter.starting import Coming, announce
from worker.gpus import Gpu, GpuSelectionError
from worker.machine import NO_GPU
from worker.sandbox.bwrap import SandboxUnavailable, preflight
from worker.settings import get_worker_settings, slurm_job
from worker.slurm_job import SlurmJob

INSECURE_ENV = "FLASHJUDGE_INSECURE"  # read by worker.settings.WorkerSettings.insecure


@dataclass(frozen=True)
class WorkerSpec:
    """One worker process to start."""

    name: str  # Celery node name prefix, e.g. "gpu0"
    app: str  # Celery -A target
    queues: str  # comma-separated queues it consumes
    env: dict[str, str]  # extra environment (CUDA_VISIBLE_DEVICES, ...)
    pool: str = "prefork"  # prefork (a child per task: survives a crash) or solo
    gpu: str = NO_GPU  # its GPU's model, as its heartbeat will name it, or "cpu"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("worker", help="run judge workers (one process per GPU)")
    add_gpus_option(parser)
    parser.add_argument("--queues", default=None,
                        help="queues to consume (default: gpu with GPUs, cpu without)")
    parser.add_argument("--control", action="store_true",
                        help="run the control worker (records results; needs the database)")
    add_insecure_option(parser)
    parser.set_defaults(func=run)


def add_gpus_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gpus", default="all",
                        help="'all', 'none' (CPU track), or GPUs as nvidia-smi numbers them or by "
                             "UUID, e.g. 0,1 (default: all; within CUDA_VISIBLE_DEVICES if set)")


def add_insecure_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--insecure", action="store_true",
                        help="judge even where submissions cannot be sandboxed (development only; "
                             "every result then says INSECURE)")


def sandbox_refusal(insecure: bool) -> str | None:
    """Why judge workers must not start here (None: they may).

    Checked before any worker starts, so a machine without user namespaces, cgroups or bubblewrap
    refuses to judge at all instead of failing every submission (or running them unprotected).
    With --insecure the workers start, and FLASHJUDGE_INSECURE tells them to mark every result."""
    try:
        machine = get_worker_settings().machine()
        report = preflight(insecure=insecure, bwrap=machine.bwrap, cgroup_root=machine.cgroup_root)
    except SandboxUnavailable as exc:
        return f"flashjudge: refusing to start judge workers: {exc}"
    if insecure:
        os.environ[INSECURE_ENV] = "1"
        print("flashjudge: INSECURE: judging without the sandbox's protections (development only)")
    print(report.summary())
    return None


def judge_specs(gpus: list[Gpu], queues: str | None) -> list[WorkerSpec]:
    """One process per GPU, pinned by UUID (worker/gpus.py), or one on the CPU track."""
    if not gpus:
        return [WorkerSpec("cpu", "worker.celery_adapter.entry", queues or "cpu",
                           {"CUDA_VISIBLE_DEVICES": ""})]
    return [WorkerSpec(f"gpu{g.index}", "worker.celery_adapter.entry", queues or "gpu", g.pin(),
                       gpu=g.name) for g in gpus]


def in_job(specs: list[WorkerSpec], job: SlurmJob | None) -> list[WorkerSpec]:
    """In a Slurm job, each process's name carries the job id ("cpu-job4812@node"), so two
    jobs on one node never share a heartbeat row or a Celery node name."""
    if job is None:
        return specs
    return [dataclasses.replace(s, name=f"{s.name}-job{job.job_id}") for s in specs]


def control_spec() -> WorkerSpec:
    return WorkerSpec("control", "app.control.entry", "control", {}, pool="solo")


def start(spec: WorkerSpec, drain_file: Path | None = None) -> subprocess.Popen:
    """Start one Celery worker process (concurrency 1, prefetch 1 from the app's config); it
    drains once `drain_file` exists (worker/celery_adapter/drain.py).

    Each worker leads its own process group: a terminal's Ctrl-C or a `kill` of our group then
    reaches us alone, and we stop the workers in order. Signalled together with us, a prefork
    worker's pool child died at once and left the worker in a warm shutdown that waited for it
    for minutes; its own group also lets `stop` kill the worker with its pool children."""
    argv = [sys.executable, "-m", "celery", "-A", spec.app, "worker", "-Q", spec.queues,
            "-c", "1", "-P", spec.pool, "-n", f"{spec.name}@%h", "--loglevel", "INFO"]
    env = {**os.environ, **spec.env, "FLASHJUDGE_QUEUES": spec.queues,
           "FLASHJUDGE_WORKER_NAME": spec.name, "PYTHONWARNINGS": python_warnings(),
           **({"FLASHJUDGE_DRAIN_FILE": str(drain_file)} if drain_file is not None else {})}
    return subprocess.Popen(argv, env=env, start_new_session=True)


# Celery warns on every start as root ("You're running the worker with superuser privileges").
# Its real danger, unpickling messages as root, cannot happen here: both sides accept JSON only
# (flashjudge.contract.celery_config), and submissions never run as root (bubblewrap runs them as
# nobody, 65534). So that one warning is filtered by its text; C_FORCE_ROOT, which would also
# let pickle in, is not set.
ROOT_WARNING = "ignore:You're running the worker with superuser privileges"


def python_warnings() -> str:
    """$PYTHONWARNINGS for a worker: the caller's filters plus the root warning's."""
    return ",".join(w for w in (os.environ.get("PYTHONWARNINGS", ""), ROOT_WARNING) if w)


# How long a stopped worker may finish the judging in hand (Celery's warm shutdown) before it is
# killed and the control side re-sends the submission. Compose stops a container with a
# 2-minute grace period (stop_grace_period: 2m); 100 s leaves room for the kill and our exit
# inside it, while most judgings (30 tests near their limits) finish.
STOP_GRACE_S = 100.0
SLURM_KILL_MARGIN_S = 10.0  # in a Slurm job, what is left is killed this long before its end,
# so the worker exits before Slurm kills it (its judging was handed back at slurm_handback_s)


def stop(procs: list[subprocess.Popen], grace_s: float = STOP_GRACE_S) -> None:
    """Ask every worker to stop (SIGTERM: finish the current task), kill any still running
    after `grace_s` seconds in all, with whatever is left in its process group (pool children;
    a sandbox dies with its parent, bwrap's --die-with-parent)."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + grace_s
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # no pool child outlives its worker


def interrupt(_signum: int, _frame: object) -> None:
    """SIGTERM stops the workers the way Ctrl-C does."""
    raise KeyboardInterrupt


def stop_grace(job: SlurmJob | None, now: float) -> float:
    """How long the workers may finish their judging once told to stop: STOP_GRACE_S, or in a
    Slurm job with a limit, until SLURM_KILL_MARGIN_S before its end."""
    left = job.seconds_left(now) if job is not None else None
    return STOP_GRACE_S if left is None else max(0.0, left - SLURM_KILL_MARGIN_S)


def drain_alarm(job: SlurmJob | None, drain_s: float, now: float) -> int:
    """Seconds until this worker drains by itself in a Slurm job, FLASHJUDGE_SLURM_DRAIN_S
    before its end (or halfway, in a job shorter than twice that), should Slurm's warning not
    come first (0: never)."""
    left = job.seconds_left(now) if job is not None else None
    return 0 if left is None else max(1, int(left - min(drain_s, left / 2)))


def still(job: SlurmJob | None) -> SlurmJob | None:
    """The job's end read again (an admin may have moved the limit), unless slurmctld says it
    ends now: a cancelled job (whose processes Slurm kills after KillWait anyway)."""
    again = slurm_job() if job is not None else None
    return again if again is not None and (again.seconds_left(time.time()) or 1) > 1 else job


def supervise(specs: list[WorkerSpec], job: SlurmJob | None = None) -> int:
    """Run the workers until one exits, we are told to stop (SIGTERM: Slurm's warning, scancel,
    docker stop) or the Slurm job's drain time comes; then drain them: the drain file tells
    their processes, and each finishes or hands back the judging it holds."""
    folder = Path(tempfile.mkdtemp(prefix="flashjudge-drain-"))
    drain_file = folder / "drain"
    procs = [start(s, drain_file) for s in specs]
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGALRM, interrupt)
    signal.alarm(drain_alarm(job, get_worker_settings().slurm_drain_s, time.time()))
    try:
        os.wait()
    except (KeyboardInterrupt, ChildProcessError):
        pass
    finally:
        signal.alarm(0)
        drain_file.touch()
        grace = stop_grace(still(job), time.time())
        print(f"flashjudge worker: draining (up to {grace:.0f} s)", flush=True)
        stop(procs, grace)
        shutil.rmtree(folder, ignore_errors=True)
    return max((p.returncode or 0) for p in procs)


def coming(specs: list[WorkerSpec]) -> list[Coming]:
    """The workers about to start, as their heartbeats will name them."""
    return [Coming(s.name, s.queues, s.gpu) for s in specs]


def run(args: argparse.Namespace) -> int:
    if args.control:
        return supervise([control_spec()])
    try:
        gpus = judge_gpus(args.gpus)
    except GpuSelectionError as exc:
        print(f"flashjudge worker: {exc}", file=sys.stderr)
        return 2
    job = slurm_job()
    specs = in_job(judge_specs(gpus, args.queues), job)
    announce(coming(specs), "starting (preflight)")  # /readyz names them from now on
    refusal = sandbox_refusal(args.insecure)
    if refusal:
        print(refusal, file=sys.stderr)
        announce(coming(specs), f"not starting: {refusal}")
        return 2
    announce(coming(specs), "starting (connecting to the broker)")
    print(f"flashjudge worker: {len(specs)} process(es): "
          + ", ".join(f"{s.name} [{s.queues}]" for s in specs))
    for gpu in gpus:
        print(f"  {gpu.label()}")
    if job is not None:
        print(f"flashjudge worker: in {job.describe(time.time())}", flush=True)
    return supervise(specs, job)
