"""The Slurm commands the control side runs for its worker jobs: sbatch, squeue, scancel.

Each runs with the app's environment minus every FLASHJUDGE_* variable (sbatch hands the
submitter's environment to the job: the database URL and the session key must never reach a
compute node), plus what `slurm_job_env` names (the worker's env file, its checkout). A command
that cannot run or fails is an answer with its error, never an exception: the scaler shows it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Submitted:
    """What sbatch answered: the job id, or why it refused."""

    job_id: str | None
    error: str = ""


@dataclass(frozen=True)
class Seen:
    """What squeue says of one job now."""

    state: str  # PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
    reason: str  # None, Resources, PartitionDown, ...


def job_env(base: Mapping[str, str], extra: str) -> dict[str, str]:
    """The environment of a Slurm command: `base` without FLASHJUDGE_*, plus `extra`'s pairs."""
    env = {k: v for k, v in base.items() if not k.startswith("FLASHJUDGE_")}
    for pair in shlex.split(extra):
        name, _, value = pair.partition("=")
        env[name] = value
    return env


@dataclass
class SlurmCommands:
    """sbatch, squeue and scancel, with one environment."""

    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))

    def _run(self, argv: list[str]) -> tuple[int, str, str]:
        try:
            done = subprocess.run(argv, env=self.env, capture_output=True, text=True,
                                  timeout=TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return 127, "", f"{argv[0]} could not run: {exc}"
        return done.returncode, done.stdout.strip(), done.stderr.strip()

    def submit(self, script: Path, args: list[str]) -> Submitted:
        code, out, err = self._run(["sbatch", "--parsable", *args, str(script)])
        if code != 0 or not out:
            return Submitted(None, err or f"sbatch exited {code}")
        return Submitted(out.split(";")[0])

    def states(self, job_ids: list[str]) -> dict[str, Seen] | None:
        """The jobs Slurm still knows (ended ones for MinJobAge); None when squeue failed."""
        if not job_ids:
            return {}
        code, out, err = self._run(["squeue", "-h", "-t", "all", "-j", ",".join(job_ids),
                                    "-o", "%i|%T|%r"])
        if code != 0 and "Invalid job id" in err:  # one of them is forgotten: ask one by one
            if len(job_ids) == 1:
                return {}
            found: dict[str, Seen] = {}
            for job_id in job_ids:
                one = self.states([job_id])
                if one is None:
                    return None
                found.update(one)
            return found
        if code != 0:
            return None
        seen = {}
        for line in out.splitlines():
            job_id, _, rest = line.partition("|")
            state, _, reason = rest.partition("|")
            seen[job_id.strip()] = Seen(state.strip(), reason.strip())
        return seen

    def drain(self, job_id: str) -> str:
        """Slurm's own warning, now: SIGTERM to the batch process alone, so the worker drains
        and the job ends; "" or the error."""
        code, _out, err = self._run(["scancel", "--batch", "--signal=TERM", job_id])
        return "" if code == 0 else err or f"scancel exited {code}"

    def cancel(self, job_id: str) -> str:
        """End a job that never started; "" or the error."""
        code, _out, err = self._run(["scancel", job_id])
        return "" if code == 0 else err or f"scancel exited {code}"
