"""What a worker learns from its Slurm job (worker/slurm_job.py): the job, its node, the GPUs it
may pin, the GPUs a TA page names, and the time left.

The environments under recorded/ come from real jobs on the tests' Slurm 22.05 (four stand-in GPU
device files, devices not constrained), except constrained-gres.env and end-time.env, written by
hand from Slurm's documentation (each file's header says how it was made). The last tests ask a
real job of the tests' cluster."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from flashjudge_cli.commands.worker import in_job, judge_specs
from tests.slurm.cluster import SlurmCluster
from worker.gpus import choose
from worker.machine import Gpu
from worker.slurm_job import SlurmJob, duration_seconds, parse_squeue_end

RECORDED = Path(__file__).with_name("recorded")
REPO = Path(__file__).resolve().parents[2]
NOW = 1795828000.0
# squeue -h -j ID -o '%e|%L|%l' as Slurm 22.05 printed it for a running 3-minute job and a job
# without a limit, with SLURM_TIME_FORMAT=%s, and for the first without it
SQUEUE_LIMITED = "1795828173|2:59|3:00"
SQUEUE_UNLIMITED = "NONE|UNLIMITED|UNLIMITED"
SQUEUE_LOCAL_TIME = "2026-11-28T01:09:33|2:59|3:00"


def recorded(name: str) -> dict[str, str]:
    lines = (RECORDED / f"{name}.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def never_asked(job_id: str, env: Mapping[str, str], now: float) -> float | None:
    raise AssertionError("slurmctld was asked for an end the environment gave")


def ended_at(end: float | None):  # noqa: ANN201 - a lookup as squeue would answer
    def ask(job_id: str, env: Mapping[str, str], now: float) -> float | None:
        return end
    return ask


def test_outside_slurm_there_is_no_job() -> None:
    assert SlurmJob.from_environment({"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": "0"},
                                     NOW) is None


def test_a_batch_job_without_gres_grants_no_gpu() -> None:
    """Slurm removes CUDA_VISIBLE_DEVICES from a job without GPUs: a worker there must take
    none of the node's GPUs, not all of them."""
    job = SlurmJob.from_environment(recorded("batch"), NOW, ask=ended_at(NOW + 300))
    assert job is not None
    assert (job.job_id, job.node, job.partition, job.cluster) == ("1", "fjnode", "nvidia",
                                                                   "fjtest")
    assert (job.gpus, job.gpu_ids, job.gpus_from) == ((), (), "")
    assert (job.end_time, job.end_from) == (NOW + 300, "squeue")


def test_a_gres_job_pins_the_gpus_slurm_granted() -> None:
    job = SlurmJob.from_environment(recorded("batch-gres"), NOW, ask=None)
    assert job is not None
    assert (job.gpus, job.gpus_from, job.gpu_ids) == (("1", "2"), "CUDA_VISIBLE_DEVICES",
                                                      ("1", "2"))


def test_an_srun_step_has_its_own_share_of_the_jobs_gpus() -> None:
    """The step was granted GPU 1 of the job's 1,2: the step's list wins over the job's."""
    job = SlurmJob.from_environment(recorded("step-gres"), NOW, ask=None)
    assert job is not None
    assert (job.gpus, job.gpu_ids) == (("1",), ("1",))


def test_constrained_devices_are_pinned_as_cuda_counts_them_and_named_as_slurm_does() -> None:
    job = SlurmJob.from_environment(recorded("constrained-gres"), NOW, ask=None)
    assert job is not None
    assert job.gpus == ("0", "1")  # what this process's CUDA (and NVML) see
    assert job.gpu_ids == ("2", "3")  # the node's GPUs 2 and 3, as the TA page names them
    assert job.describe(NOW).startswith("Slurm job 4812 on gpu07 (nvidia), GPUs 2,3, ")


@pytest.mark.parametrize("variables, gpus, source", [
    ({"GPU_DEVICE_ORDINAL": "0,1", "SLURM_JOB_GPUS": "2,3"}, ("0", "1"), "GPU_DEVICE_ORDINAL"),
    ({"SLURM_JOB_GPUS": "2,3"}, ("2", "3"), "SLURM_JOB_GPUS"),
    ({"SLURM_STEP_GPUS": "3", "SLURM_JOB_GPUS": "2,3"}, ("3",), "SLURM_STEP_GPUS"),
    ({"CUDA_VISIBLE_DEVICES": "NoDevFiles", "SLURM_JOB_GPUS": "2"}, (), ""),
    ({"CUDA_VISIBLE_DEVICES": "", "SLURM_JOB_GPUS": "2"}, (), ""),
])
def test_which_variable_names_the_gpus(variables: dict[str, str], gpus: tuple[str, ...],
                                       source: str) -> None:
    """CUDA_VISIBLE_DEVICES wins even when empty (someone narrowed it to none); then
    GPU_DEVICE_ORDINAL, then the step's, then the job's global ids."""
    env = {**recorded("batch"), **variables}
    job = SlurmJob.from_environment(env, NOW, ask=None)
    assert job is not None
    assert (job.gpus, job.gpus_from) == (gpus, source)


def test_an_end_time_in_the_environment_is_taken_without_asking() -> None:
    job = SlurmJob.from_environment(recorded("end-time"), NOW, ask=never_asked)
    assert job is not None
    assert (job.end_time, job.end_from) == (1795830000.0, "SLURM_JOB_END_TIME")
    assert job.seconds_left(NOW) == 2000.0


def test_time_left_counts_down_to_zero_and_is_unknown_without_a_limit() -> None:
    job = SlurmJob.from_environment(recorded("batch"), NOW, ask=ended_at(NOW + 90))
    assert job is not None
    assert job.seconds_left(NOW) == 90.0
    assert job.seconds_left(NOW + 100) == 0.0
    assert job.describe(NOW + 30) == "Slurm job 1 on fjnode (nvidia), no GPU, 0:01:00 left"
    unlimited = SlurmJob.from_environment(recorded("batch-unlimited"), NOW, ask=ended_at(None))
    assert unlimited is not None
    assert (unlimited.end_time, unlimited.end_from, unlimited.seconds_left(NOW)) == (None, "",
                                                                                      None)
    assert unlimited.describe(NOW).endswith(", no time limit")


def test_squeues_answers_are_read() -> None:
    assert parse_squeue_end(SQUEUE_LIMITED, NOW) == 1795828173.0
    assert parse_squeue_end(SQUEUE_UNLIMITED, NOW) is None
    assert parse_squeue_end(SQUEUE_LOCAL_TIME, NOW) == NOW + 179  # from the time left
    assert parse_squeue_end("", NOW) is None
    assert [duration_seconds(t) for t in ("2:59", "1:00:00", "1-02:03:04", "5", "x:1")] == [
        179, 3600, 93784, 300, None]


# A real job asks itself, through the module, what it is.
ASK_ITSELF = """
import json, os, time
from worker.slurm_job import SlurmJob
now = time.time()
job = SlurmJob.from_environment(os.environ, now)
print(json.dumps({**job.__dict__, "left": job.seconds_left(now)}))
"""


def ask_in_a_job(slurm: SlurmCluster, tmp_path: Path, *sbatch: str) -> tuple[str, dict]:
    program, output = tmp_path / "ask.py", tmp_path / "job.json"
    program.write_text(ASK_ITSELF)
    job_id = slurm.sbatch(*sbatch, "--output", str(output), "--wrap",
                          f"exec {sys.executable} {program}", PYTHONPATH=str(REPO))
    ended = slurm.wait_for(job_id, {"COMPLETED", "FAILED"}, 30)
    assert ended.state == "COMPLETED", output.read_text()
    return job_id, json.loads(output.read_text())


@pytest.mark.usefixtures("time_limit_job")
def test_a_real_job_knows_its_id_node_gpus_and_end(slurm: SlurmCluster, tmp_path: Path) -> None:
    gres = ["--gres=gpu:2"] if slurm.gpus else []
    job_id, seen = ask_in_a_job(slurm, tmp_path, "--time=3", *gres)
    assert (seen["job_id"], seen["node"], seen["partition"]) == (job_id, "fjnode", "nvidia")
    assert len(seen["gpus"]) == (2 if gres else 0)
    assert seen["gpus"] == seen["gpu_ids"]  # devices are not constrained here
    assert seen["end_from"] == "squeue"
    start = slurm.job(job_id).start
    assert start is not None
    assert seen["end_time"] == start + 180
    assert 0 < seen["left"] <= 180


@pytest.mark.usefixtures("time_limit_job")
def test_a_real_job_without_a_limit_has_no_end(slurm: SlurmCluster, tmp_path: Path) -> None:
    _, seen = ask_in_a_job(slurm, tmp_path)
    assert (seen["end_time"], seen["end_from"], seen["left"]) == (None, "", None)


def node(count: int) -> list[Gpu]:
    """A node's GPUs as NVML lists them (inside a device cgroup: only the granted ones)."""
    return [Gpu(index=i, uuid=f"GPU-{i:04d}", name="NVIDIA H100 80GB HBM3", minor=i,
                pci_bus_id=f"0000:{i:02x}:00.0") for i in range(count)]


@pytest.mark.parametrize(("name", "listed", "pinned"), [
    ("batch-gres", 4, ["GPU-0001", "GPU-0002"]),  # devices not constrained: the node's 1 and 2
    ("constrained-gres", 2, ["GPU-0000", "GPU-0001"]),  # the cgroup shows the grant from 0
    ("batch", 4, []),  # no gres: the template empties CUDA_VISIBLE_DEVICES: the CPU track
])
def test_flashjudge_worker_starts_one_process_per_granted_gpu_and_no_other(
        name: str, listed: int, pinned: list[str]) -> None:
    """`flashjudge worker --gpus all` in a job of these recorded environments: each process is
    pinned by UUID to one GPU of the grant and named for the job, so the TA page tells jobs on
    one node apart."""
    env = recorded(name)
    if not (env.get("SLURM_JOB_GPUS") or env.get("SLURM_STEP_GPUS")):
        env["CUDA_VISIBLE_DEVICES"] = ""  # what the template does for a job without GPUs
    job = SlurmJob.from_environment(env, NOW, ask=None)
    gpus = choose(node(listed), "all", env.get("CUDA_VISIBLE_DEVICES"))
    specs = in_job(judge_specs(gpus, None), job)
    if pinned:
        assert [s.env["CUDA_VISIBLE_DEVICES"] for s in specs] == pinned
        assert all(s.queues == "gpu" and s.name.endswith(f"-job{env['SLURM_JOB_ID']}")
                   for s in specs)
    else:
        assert [(s.name, s.queues, s.env["CUDA_VISIBLE_DEVICES"]) for s in specs] == [
            (f"cpu-job{env['SLURM_JOB_ID']}", "cpu", "")]
