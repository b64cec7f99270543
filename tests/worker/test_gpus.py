"""GPUs by identity (worker/gpus.py), on recorded NVML and nvidia-smi answers: which GPUs a node
gives the judge, the environment that pins each worker, and the one answer to "which GPU am I"
(Machine.gpu) a pinned worker finds, on a uniform node and on a mixed one."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from worker.gpus import (
    Gpu,
    GpuSelectionError,
    choose,
    handed_gpu,
    list_gpus,
    node_gpus,
    parse_compute_cap,
    parse_smi_line,
    smi_gpus,
)
from worker.languages.arch import gpu_arch
from worker.settings import WorkerSettings

RECORDED = Path(__file__).parent / "nvml_answers"


class RecordedNvml:
    """NVML's answers as recorded on a node (tests/worker/nvml_answers/*.json)."""

    def __init__(self, devices: list[dict[str, Any]], driver: str | None = None) -> None:
        self.devices = devices
        self.driver = driver
        self.open = 0

    @classmethod
    def load(cls, name: str) -> RecordedNvml:
        recorded = json.loads((RECORDED / f"{name}.json").read_text())
        return cls(recorded["devices"], recorded.get("driver"))

    def nvmlInit(self) -> None:
        self.open += 1

    def nvmlShutdown(self) -> None:
        self.open -= 1

    def nvmlDeviceGetCount(self) -> int:
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> dict[str, Any]:
        return self.devices[index]

    def nvmlDeviceGetUUID(self, handle: dict[str, Any]) -> str:
        return str(handle["uuid"])

    def nvmlDeviceGetName(self, handle: dict[str, Any]) -> bytes:
        return str(handle["name"]).encode()  # older pynvml answers bytes

    def nvmlDeviceGetMinorNumber(self, handle: dict[str, Any]) -> int:
        return int(handle["minor"])

    def nvmlDeviceGetPciInfo(self, handle: dict[str, Any]) -> SimpleNamespace:
        return SimpleNamespace(busId=handle["pci_bus_id"])

    # answers a recording may lack (an older driver, a call documented for MIG devices only):
    # NVML raises then, as here
    def nvmlDeviceGetCudaComputeCapability(self, handle: dict[str, Any]) -> tuple[int, int]:
        major, minor = handle["compute_cap"]
        return major, minor

    def nvmlDeviceGetAttributes(self, handle: dict[str, Any]) -> SimpleNamespace:
        return SimpleNamespace(multiprocessorCount=handle["sm_count"])

    def nvmlSystemGetDriverVersion(self) -> str:
        if self.driver is None:
            raise KeyError("not recorded")
        return self.driver


def recorded_smi(name: str) -> str:
    """nvidia-smi's recorded answer to worker.gpus.SMI_QUERY on that node."""
    return str(json.loads((RECORDED / f"{name}.json").read_text())["nvidia_smi"])


def test_every_gpu_is_listed_with_its_identity_and_nvml_is_closed_again() -> None:
    nvml = RecordedNvml.load("mixed")
    gpus = list_gpus(nvml)
    assert [(g.index, g.name, g.minor, g.compute_cap, g.sm_count) for g in gpus] == [
        (0, "NVIDIA A100-SXM4-40GB", 2, "80", 108), (1, "NVIDIA H100 80GB HBM3", 0, "90", 132)]
    assert {g.driver for g in gpus} == {"580.65.06"}
    assert nvml.open == 0


def test_a_worker_is_pinned_by_uuid_and_finds_its_own_gpu_again() -> None:
    gpus = list_gpus(RecordedNvml.load("mixed"))
    h100 = gpus[1]
    env = h100.pin()
    assert env == {"CUDA_VISIBLE_DEVICES": h100.uuid, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    handed = handed_gpu(env["CUDA_VISIBLE_DEVICES"], gpus)
    assert handed == h100 and handed.minor == 0  # /dev/nvidia0, not 1: the index is no node


@pytest.mark.parametrize("answers", ["nvml", "nvidia-smi"])
def test_a_uuid_pinned_worker_on_a_mixed_node_is_its_own_gpu(
        answers: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The H100 is NVML's GPU 1 behind an A100: a worker pinned to it by UUID builds for sm_90,
    names its model and binds its own device node, whichever way the driver was asked."""
    gpus = (list_gpus(RecordedNvml.load("mixed")) if answers == "nvml"
            else smi_gpus(lambda argv: recorded_smi("mixed")))
    monkeypatch.delenv("FLASHJUDGE_GPU_ARCH", raising=False)
    for gpu, arch in zip(gpus, ("80", "90"), strict=True):
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", gpu.pin()["CUDA_VISIBLE_DEVICES"])
        machine = WorkerSettings().machine(gpus)
        assert machine.gpu == gpu and machine.gpu_model == gpu.name
        assert gpu_arch(machine) == arch
    assert machine.gpu is not None and machine.gpu.minor == (0 if answers == "nvml" else None)


@pytest.mark.parametrize("visible, expected", [
    (None, 0),  # unset: CUDA's first GPU
    ("", None),  # set empty: CUDA sees none (the CPU track)
    ("1", 1),  # an index, as nvidia-smi numbers them
    ("GPU-5f3b", 1),  # a UUID prefix
    ("GPU-", None),  # ambiguous
    ("7", None),  # no such GPU
])
def test_the_gpu_a_worker_was_handed(visible: str | None, expected: int | None) -> None:
    gpus = list_gpus(RecordedNvml.load("mixed"))
    handed = handed_gpu(visible, gpus)
    assert (handed.index if handed else None) == expected


def test_without_a_gpu_the_machine_is_the_cpu_tracks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.delenv("FLASHJUDGE_GPU_ARCH", raising=False)
    machine = WorkerSettings().machine(list_gpus(RecordedNvml.load("mixed")))
    assert machine.gpu is None and machine.gpu_model == "cpu"
    assert gpu_arch(machine) == "90"  # builds still target the course's H100


@pytest.mark.parametrize("spec, visible, expected", [
    ("all", None, [0, 1]),
    ("none", None, []),
    ("1", None, [1]),
    ("1,0,1", None, [1, 0]),
    ("all", "1", [1]),  # an operator's CUDA_VISIBLE_DEVICES limits `all`
    ("all", "", []),  # ... to nothing, even
    ("all", "GPU-5f3b", [1]),  # a UUID prefix names a GPU too
])
def test_the_operator_decides_which_gpus_judge(spec: str, visible: str | None,
                                                expected: list[int]) -> None:
    gpus = list_gpus(RecordedNvml.load("mixed"))
    assert [g.index for g in choose(gpus, spec, visible)] == expected


@pytest.mark.parametrize("spec, visible, message", [
    ("2", None, "--gpus names '2', which is no single GPU of this node"),
    ("GPU-", None, "which is no single GPU"),  # ambiguous prefix
    ("0", "1", "outside CUDA_VISIBLE_DEVICES=1"),
    ("all", "7", "CUDA_VISIBLE_DEVICES names '7'"),
])
def test_a_choice_naming_no_gpu_is_refused_with_the_gpus_listed(spec: str, visible: str | None,
                                                                message: str) -> None:
    gpus = list_gpus(RecordedNvml.load("mixed"))
    with pytest.raises(GpuSelectionError, match=message.replace("(", r"\(")) as caught:
        choose(gpus, spec, visible)
    assert "GPU-" in str(caught.value) or "outside" in str(caught.value)


def test_the_two_gpu_node_the_cluster_check_ran_on() -> None:
    """Recorded on the lent 2-GPU node (bench/gpu_cluster_check.sh writes the file)."""
    gpus = list_gpus(RecordedNvml.load("h200x2"))
    assert len(gpus) == 2 and len({g.uuid for g in gpus}) == 2
    assert all(handed_gpu(g.pin()["CUDA_VISIBLE_DEVICES"], gpus) == g for g in gpus)
    assert [g.minor for g in gpus] == [0, 1]
    assert {g.compute_cap for g in gpus} == {None}  # recorded before compute capabilities were


def test_a_node_without_nvml_has_no_gpus() -> None:
    def missing() -> RecordedNvml:
        raise ImportError("No module named 'pynvml'")
    assert node_gpus(missing) == []


def test_gpu_label_names_everything_an_operator_needs() -> None:
    gpu = Gpu(index=3, uuid="GPU-1", name="NVIDIA H200", minor=5, pci_bus_id="0:1")
    assert gpu.label() == "GPU 3 NVIDIA H200 (GPU-1, /dev/nvidia5)"


def test_without_nvml_the_gpus_come_from_nvidia_smi_lines() -> None:
    gpu = parse_smi_line("1, GPU-5f3b8e21, NVIDIA H100 80GB HBM3, 00000000:19:00.0, 9.0, 580.65")
    assert (gpu.index, gpu.uuid, gpu.name, gpu.minor, gpu.compute_cap, gpu.driver) == (
        1, "GPU-5f3b8e21", "NVIDIA H100 80GB HBM3", None, "90", "580.65")
    # the sandbox resolves the UUID itself; a model's name may hold a comma
    assert parse_smi_line("0, GPU-1, Tesla, V100, 0:1, 7.0, 1").name == "Tesla, V100"


def test_a_driver_that_knows_no_compute_cap_still_lists_its_gpus() -> None:
    def old_driver(argv: list[str]) -> str:  # refuses the whole query for one unknown field
        return "" if "compute_cap" in argv[1] else "0, GPU-0, Tesla P100, 0:1\n"
    assert [(g.uuid, g.name, g.compute_cap) for g in smi_gpus(old_driver)] == [
        ("GPU-0", "Tesla P100", None)]


def test_compute_cap_parsing() -> None:
    assert parse_compute_cap("9.0\n") == "90"
    assert parse_compute_cap("12.1") == "121"
    assert parse_compute_cap("N/A") is None
