"""What a GPU worker process keeps up for its whole life beside its tasks: the driver keeper
(worker/sandbox/gpu/driver_keeper.py), and its own threads (comparisons, clean-up, heartbeats, the
GPU watch) moved off the cores its timed runs own (worker/cpus.py), so nothing of the judge's
shares a core with the program it times."""

from __future__ import annotations

import logging
import os
import subprocess

from worker.cpus import parse_cpulist
from worker.machine import Machine
from worker.sandbox.gpu.driver_keeper import KeeperError, start_keeper

log = logging.getLogger(__name__)


def start_node_parts(machine: Machine, keeper: bool) -> subprocess.Popen[bytes] | None:
    """Pin this process off its runs' cores, start the keeper; the keeper (or None)."""
    if machine.run_cpus:
        house = set(os.sched_getaffinity(0)) - set(parse_cpulist(machine.run_cpus))
        if house:
            os.sched_setaffinity(0, house)
            log.info("worker threads on cores %s; timed runs own %s", sorted(house),
                     machine.run_cpus)
    if not keeper or machine.gpu is None:
        return None
    try:
        return start_keeper(os.environ)
    except (KeeperError, OSError) as exc:
        log.warning("no driver keeper: %s", exc)
        return None
