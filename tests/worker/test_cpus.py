"""Each GPU worker's timed runs get cores of their own, near their GPU, disjoint from the other
workers' and from the housekeeping cores; a small machine pins nobody."""

from __future__ import annotations

from pathlib import Path

from worker.cpus import CpuPlan, local_cpus, parse_cpulist, plan_cpus


def test_the_kernels_cpu_lists_are_read() -> None:
    assert parse_cpulist("0-3,8,10-11\n") == {0, 1, 2, 3, 8, 10, 11}


def test_a_gpus_local_cores_come_from_its_pci_device(tmp_path: Path) -> None:
    device = tmp_path / "0000:00:06.0"
    device.mkdir()
    (device / "local_cpulist").write_text("0-15\n")
    assert local_cpus("00000000:00:06.0", tmp_path) == frozenset(range(16))
    assert local_cpus("00000000:00:07.0", tmp_path) is None


def test_four_gpus_on_one_numa_node_split_its_cores_beside_the_housekeeping_ones() -> None:
    cores = frozenset(range(64))
    plans = [plan_cpus(cores, [cores] * 4, i, house_cores=4) for i in range(4)]
    runs = [p.run for p in plans]
    assert all(r is not None and len(r) == 15 for r in runs)
    assert set().union(*runs) <= cores - {0, 1, 2, 3}  # type: ignore[arg-type]
    assert sum(len(r) for r in runs if r) == len(set().union(*runs))  # type: ignore[arg-type]
    assert plans[0].house == frozenset({0, 1, 2, 3})
    assert plans[0].run_list() == ",".join(str(c) for c in range(4, 19))


def test_each_gpu_takes_cores_from_its_own_numa_node() -> None:
    cores = frozenset(range(32))
    near = [frozenset(range(16)), frozenset(range(16)), frozenset(range(16, 32)),
            frozenset(range(16, 32))]
    plans = [plan_cpus(cores, near, i, house_cores=2) for i in range(4)]
    assert plans[0].run == frozenset(range(2, 9)) and plans[1].run == frozenset(range(9, 16))
    assert plans[2].run == frozenset(range(16, 24)) and plans[3].run == frozenset(range(24, 32))


def test_a_two_core_machine_pins_nobody() -> None:
    assert plan_cpus(frozenset({0, 1}), [None], 0, house_cores=1) == CpuPlan(None, None)
