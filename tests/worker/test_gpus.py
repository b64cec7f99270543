"""GPUs by identity (worker/gpus.py), on recorded NVML answers: which GPUs a node gives the judge
and the environment that pins each worker, on a uniform node and on a mixed one."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from worker.gpus import Gpu, GpuSelectionError, choose, list_gpus, node_gpus, parse_smi_line

RECORDED = Path(__file__).parent / "nvml_answers"


class RecordedNvml:
    """NVML's answers as recorded on a node (tests/worker/nvml_answers/*.json)."""

    def __init__(self, devices: list[dict[str, Any]]) -> None:
        self.devices = devices
        self.open = 0

    @classmethod
    def load(cls, name: str) -> RecordedNvml:
        return cls(json.loads((RECORDED / f"{name}.json").read_text())["devices"])

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


def test_every_gpu_is_listed_with_its_identity_and_nvml_is_closed_again() -> None:
    nvml = RecordedNvml.load("mixed")
    gpus = list_gpus(nvml)
    assert [(g.index, g.name, g.minor) for g in gpus] == [
        (0, "NVIDIA A100-SXM4-40GB", 2), (1, "NVIDIA H100 80GB HBM3", 0)]
    assert nvml.open == 0


def test_a_worker_is_pinned_by_uuid_and_its_device_node_is_the_gpus_own() -> None:
    h100 = list_gpus(RecordedNvml.load("mixed"))[1]
    env = h100.pin()
    assert env["CUDA_VISIBLE_DEVICES"] == h100.uuid.strip() and h100.uuid.startswith("GPU-")
    assert env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    assert env["FLASHJUDGE_GPU_MINOR"] == "0"  # not 1: the index is no device node
    assert env["FLASHJUDGE_GPU_NAME"] == "NVIDIA H100 80GB HBM3"


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
    assert all(g.pin()["FLASHJUDGE_GPU_MINOR"] == str(g.minor) for g in gpus)


def test_a_node_without_nvml_has_no_gpus() -> None:
    def missing() -> RecordedNvml:
        raise ImportError("No module named 'pynvml'")
    assert node_gpus(missing) == []


def test_gpu_label_names_everything_an_operator_needs() -> None:
    gpu = Gpu(index=3, uuid="GPU-1", name="NVIDIA H200", minor=5, pci_bus_id="0:1")
    assert gpu.label() == "GPU 3 NVIDIA H200 (GPU-1, /dev/nvidia5)"


def test_without_nvml_the_gpus_come_from_nvidia_smi_lines() -> None:
    gpu = parse_smi_line("1, GPU-5f3b8e21, NVIDIA H100 80GB HBM3, 00000000:19:00.0")
    assert (gpu.index, gpu.uuid, gpu.name, gpu.minor) == (1, "GPU-5f3b8e21",
                                                          "NVIDIA H100 80GB HBM3", None)
    assert "FLASHJUDGE_GPU_MINOR" not in gpu.pin()  # the sandbox resolves the UUID itself
