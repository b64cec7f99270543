"""A throwaway one-machine Slurm for the tests: Debian's munged, slurmctld and slurmd, started here.

Everything lives under one temporary folder: its own munge key and socket, its own slurm.conf
(with free ports of this machine, so it never meets a site's Slurm or another test run), state,
spool and log folders, and four stand-in GPU device files. The daemons run in the foreground
(`-D`) as our children, not through systemd, which containers lack. Client commands find this
cluster through SLURM_CONF (`SlurmCluster.env`); jobs inherit it.

The partition `nvidia` takes jobs; `closed` is State=DOWN, so a job sent there waits with the
reason PartitionDown, and `inactive` is State=INACTIVE, where sbatch refuses the job outright.

Short limits keep the tests fast: KillWait=5 (SIGKILL 5 s after SIGTERM) and OverTimeLimit=0.
Slurm itself fixes the rest: time limits are whole minutes, and slurmctld checks limits and sends
`--signal` warnings on a 30 s pass (PERIODIC_TIMEOUT, not configurable), so a job reaches its
limit 60-90 s after it starts, and its warning up to 30 s after it is due.

The stand-in GPUs: gres/gpu needs character devices, so `dev/nvidia0..3` are made with mknod
(as /dev/null's twins: root only). Slurm then sets CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS and
GPU_DEVICE_ORDINAL for `--gres=gpu:N` as it would on a GPU node whose devices are not constrained
by cgroups (no task/cgroup here). Where mknod is refused the cluster runs with no GPUs.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

DAEMONS = {"munged": "munge", "slurmctld": "slurmctld", "slurmd": "slurmd",
           "sbatch": "slurm-client"}  # binary -> the Debian package that has it
SBIN = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
NODE = "fjnode"
PARTITION, CLOSED, INACTIVE = "nvidia", "closed", "inactive"
KILL_WAIT_S = 5
FAKE_GPUS = 4
MEMORY_MB = 131072  # as slurm.conf says, not as the machine has: room for the template's --mem
T = TypeVar("T")


class SlurmUnavailable(RuntimeError):
    """Slurm cannot run here; the message says why (a test skips with it)."""


def find(binary: str) -> str | None:
    """A daemon or client binary, on the PATH or in the sbin folders the PATH may lack."""
    found = shutil.which(binary)
    if found:
        return found
    return next((f"{d}/{binary}" for d in SBIN if os.access(f"{d}/{binary}", os.X_OK)), None)


def missing_packages() -> list[str]:
    return [package for binary, package in DAEMONS.items() if find(binary) is None]


def wait_until(condition: Callable[[], T | None], deadline_s: float, what: str) -> T:
    """Poll `condition` until it gives something truthy, or fail naming what never happened."""
    end = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise TimeoutError(f"timed out after {deadline_s:.0f} s waiting for {what}")
        time.sleep(0.2)


def free_ports(count: int) -> list[int]:
    """Ports nobody listens on now (bound and released at once: free for the daemons to take)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@dataclass(frozen=True)
class JobState:
    """What Slurm says of a job now."""

    state: str  # PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT, FAILED, ...
    reason: str  # why it waits or ended: None, PartitionDown, Resources, TimeLimit, ...
    start: int | None  # epoch seconds (None before it starts)
    end: int | None  # epoch seconds: the time limit while it runs, the real end once it ended


@dataclass
class SlurmCluster:
    """A running throwaway cluster and the commands that talk to it."""

    root: Path  # the folder that holds all of it
    gpus: int  # stand-in GPUs on the node (0 where mknod was refused)
    env: dict[str, str] = field(default_factory=dict)  # for client commands: SLURM_CONF, PATH
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)  # munged, slurmctld, slurmd

    @property
    def conf(self) -> Path:
        return self.root / "etc" / "slurm.conf"

    def command(self, *argv: str, check: bool = True,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """A Slurm client command against this cluster (its output as text)."""
        done = subprocess.run(list(argv), env={**self.env, **(env or {})}, capture_output=True,
                              text=True, timeout=60)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr}")
        return done

    def sbatch(self, *argv: str, **env: str) -> str:
        """Submit a job; its id."""
        return self.command("sbatch", "--parsable", *argv, env=env).stdout.strip().split(";")[0]

    def job(self, job_id: str) -> JobState:
        """The job's state, from scontrol (which keeps ended jobs for MinJobAge, 300 s)."""
        text = self.command("scontrol", "-o", "show", "job", job_id,
                            env={"SLURM_TIME_FORMAT": "%s"}).stdout
        fields = dict(f.split("=", 1) for f in text.split() if "=" in f)

        def epoch(name: str) -> int | None:
            value = fields.get(name, "")
            return int(value) if value.isdigit() else None

        return JobState(state=fields.get("JobState", "?"), reason=fields.get("Reason", "?"),
                        start=epoch("StartTime"), end=epoch("EndTime"))

    def wait_for(self, job_id: str, states: set[str], deadline_s: float) -> JobState:
        """Poll the job until its state is one of `states`."""
        def reached() -> JobState | None:
            now = self.job(job_id)
            return now if now.state in states else None
        return wait_until(reached, deadline_s, f"job {job_id} to be {' or '.join(sorted(states))}")

    def live_jobs(self) -> list[str]:
        """Jobs pending, running or still ending."""
        done = self.command("squeue", "-h", "-o", "%i", check=False)
        return done.stdout.split() if done.returncode == 0 else []

    def stop(self) -> None:
        """End every job (their processes are slurmstepd's, not ours), then stop the daemons we
        started, by their pids, and remove the folder."""
        with contextlib.suppress(Exception):
            self.command("scancel", "--user", str(os.getuid()), check=False)
            wait_until(lambda: not self.live_jobs(), 3 * KILL_WAIT_S + 20, "every job to end")
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def slurm_conf(root: Path, host: str, ports: list[int], cpus: int, gpus: int) -> str:
    """The cluster's slurm.conf: one node, three partitions, everything under `root`."""
    gres = f" Gres=gpu:{gpus}" if gpus else ""
    return "\n".join([
        "ClusterName=fjtest",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={ports[0]}",
        f"SlurmdPort={ports[1]}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={root}/run/munge.socket",
        f"SlurmUser={pwd.getpwuid(os.getuid()).pw_name}",
        f"StateSaveLocation={root}/state",
        f"SlurmdSpoolDir={root}/spool",
        f"SlurmctldPidFile={root}/run/slurmctld.pid",
        f"SlurmdPidFile={root}/run/slurmd.pid",
        f"SlurmctldLogFile={root}/log/slurmctld.log",
        f"SlurmdLogFile={root}/log/slurmd.log",
        f"PlugStackConfig={root}/etc/plugstack.conf",
        "ProctrackType=proctrack/linuxproc",  # no cgroups: containers may not offer them
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SlurmdParameters=config_overrides",  # the node's CPUs and memory as written here
        "ReturnToService=2",
        f"KillWait={KILL_WAIT_S}",
        "OverTimeLimit=0",
        "MinJobAge=300",  # ended jobs stay visible to scontrol/squeue this long
        "InactiveLimit=0",
        "SchedulerType=sched/builtin",
        *(["GresTypes=gpu"] if gpus else []),
        f"NodeName={NODE} NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus}"
        f" RealMemory={MEMORY_MB}{gres} State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
        f"PartitionName={CLOSED} Nodes={NODE} MaxTime=INFINITE State=DOWN",
        f"PartitionName={INACTIVE} Nodes={NODE} MaxTime=INFINITE State=INACTIVE",
        "",
    ])


def make_gpus(root: Path) -> int:
    """Stand-in GPU device files (character devices 1:3, like /dev/null); 0 where refused."""
    dev = root / "dev"
    dev.mkdir()
    try:
        for i in range(FAKE_GPUS):
            os.mknod(dev / f"nvidia{i}", 0o666 | 0o020000, os.makedev(1, 3))
    except (PermissionError, OSError):
        return 0
    (root / "etc" / "gres.conf").write_text(
        f"AutoDetect=off\nName=gpu File={dev}/nvidia[0-{FAKE_GPUS - 1}]\n")
    return FAKE_GPUS


def lay_out(root: Path) -> None:
    """The folders and the munge key; munged wants its key private and its socket reachable."""
    for name in ("etc", "state", "spool", "log", "munge", "run"):
        (root / name).mkdir()
    root.chmod(0o755)
    (root / "run").chmod(0o755)
    (root / "munge").chmod(0o700)
    key = root / "munge" / "munge.key"
    key.write_bytes(secrets.token_bytes(1024))
    key.chmod(0o400)
    (root / "etc" / "plugstack.conf").write_text("")


def _start(root: Path, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    with (root / "log" / f"{name}.out").open("ab") as out:
        return subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def _log_tail(root: Path) -> str:
    tails = []
    for log in sorted((root / "log").glob("*")):
        lines = log.read_text(errors="replace").splitlines()
        tails.append(f"{log.name}: " + " | ".join(lines[-4:]))
    return "; ".join(tails)


def start_daemons(cluster: SlurmCluster) -> None:
    """munged, then slurmctld, then slurmd, each in the foreground as our child."""
    root, env = cluster.root, cluster.env
    munged = [find("munged") or "munged", "-F", "--force",
              f"--socket={root}/run/munge.socket", f"--key-file={root}/munge/munge.key",
              f"--log-file={root}/log/munged.log", f"--pid-file={root}/run/munged.pid",
              f"--seed-file={root}/munge/munged.seed"]
    cluster.procs.append(_start(root, "munged", munged, env))
    wait_until(lambda: (root / "run" / "munge.socket").exists() or _died(cluster), 10,
               "munged's socket")
    cluster.procs.append(_start(root, "slurmctld",
                                [find("slurmctld") or "slurmctld", "-D", "-i"], env))
    cluster.procs.append(_start(root, "slurmd",
                                [find("slurmd") or "slurmd", "-D", "-N", NODE], env))


def _died(cluster: SlurmCluster) -> bool:
    dead = [str(p.args[0]) if isinstance(p.args, list) else str(p.args)
            for p in cluster.procs if p.poll() is not None]
    if dead:
        raise SlurmUnavailable(f"{dead[0]} exited at start: {_log_tail(cluster.root)}")
    return False


def node_idle(cluster: SlurmCluster) -> bool:
    _died(cluster)
    done = cluster.command("sinfo", "-h", "-n", NODE, "-p", PARTITION, "-o", "%T", check=False)
    return done.returncode == 0 and done.stdout.strip() == "idle"


def start_cluster(cpus: int = 16) -> SlurmCluster:
    """Start a cluster and wait until its node is idle; SlurmUnavailable says why it cannot."""
    missing = missing_packages()
    if missing:
        raise SlurmUnavailable(f"not installed: {' '.join(missing)} (`make test` installs them "
                               "with apt-get where it can)")
    if os.geteuid() != 0:
        raise SlurmUnavailable("slurmd must run as root to start jobs")
    root = Path(tempfile.mkdtemp(prefix="flashjudge-slurm-"))
    lay_out(root)
    gpus = make_gpus(root)
    host = socket.gethostname().split(".")[0]
    (root / "etc" / "slurm.conf").write_text(slurm_conf(root, host, free_ports(2), cpus, gpus))
    path = ":".join([os.environ.get("PATH", ""), *SBIN])
    cluster = SlurmCluster(root=root, gpus=gpus,
                           env={**os.environ, "SLURM_CONF": str(root / "etc" / "slurm.conf"),
                                "PATH": path})
    try:
        start_daemons(cluster)
        wait_until(lambda: node_idle(cluster), 30, f"node {NODE} to be idle")
    except (TimeoutError, SlurmUnavailable, OSError) as exc:
        tail = _log_tail(root)
        cluster.stop()
        raise SlurmUnavailable(f"{exc} ({tail})") from exc
    return cluster
