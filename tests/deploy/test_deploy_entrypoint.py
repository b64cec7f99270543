"""The worker image's entrypoint: cgroups prepared, then only the sandbox's capabilities kept.

This machine mounts cgroup v1 and has no Docker engine, so the cgroup v2 steps run against a
tree of plain files laid out as the kernel shows it; the capability set is checked for real, by
running the real sandbox (bubblewrap, cgroups) under exactly that set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import dockerfile
from .composefile import REPO

ENTRYPOINT = REPO / "docker" / "worker-entrypoint.sh"
CAPABILITY_BITS = {"chown": 0, "dac_override": 1, "dac_read_search": 2, "fowner": 3, "fsetid": 4,
                   "kill": 5, "setgid": 6, "setuid": 7, "sys_admin": 21}
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the entrypoint's root branch needs root")


def kept_capabilities() -> list[str]:
    match = re.search(r'^KEEP_CAPS="([a-z_,]+)"', ENTRYPOINT.read_text(), flags=re.M)
    assert match, "the entrypoint names the capabilities it keeps"
    return match.group(1).split(",")


def fake_cgroup_v2(root: Path, pids: list[int]) -> Path:
    """The interface files the kernel puts in each cgroup v2 directory the entrypoint uses."""
    for directory in (root, root / "judge", root / "judge" / "worker"):
        directory.mkdir(parents=True, exist_ok=True)
        for name in ("cgroup.procs", "cgroup.subtree_control", "cgroup.threads"):
            (directory / name).touch()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "cgroup.procs").write_text("".join(f"{pid}\n" for pid in pids))
    return root


def run_entrypoint(cgroup_root: Path, *command: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "FLASHJUDGE_CGROUP_ROOT": str(cgroup_root)}
    return subprocess.run(["sh", str(ENTRYPOINT), *command], env=env, capture_output=True,
                          text=True, timeout=60)


def test_the_worker_image_runs_through_the_entrypoint() -> None:
    worker = dockerfile.parse(REPO / "Dockerfile")["worker"]
    assert worker.last("USER") is None  # uid 0, so that programs run as a uid owning nothing
    entrypoint = worker.last("ENTRYPOINT")
    assert entrypoint is not None
    assert dockerfile.exec_form(entrypoint) == ["flashjudge-worker-entrypoint"]
    assert kept_capabilities() == ["chown", "dac_override", "fowner", "kill", "setgid", "setuid"]
    drop = re.search(r"exec setpriv (.*)", ENTRYPOINT.read_text().replace("\\\n", " "))
    assert drop, "the entrypoint execs the worker through setpriv"
    for flag in ("--inh-caps=-all", "--bounding-set=-all,+", "--no-new-privs"):
        assert flag in drop.group(1)
    subprocess.run(["sh", "-n", str(ENTRYPOINT)], check=True)


@needs_root
def test_the_entrypoint_prepares_cgroups_then_drops_capabilities(tmp_path: Path) -> None:
    cgroup = fake_cgroup_v2(tmp_path / "cgroup", pids=[1, 4242])
    probe = "id -u; grep -E '^Cap(Eff|Bnd)' /proc/self/status; grep NoNewPrivs /proc/self/status"
    run = run_entrypoint(cgroup / "judge", "sh", "-c", probe)
    assert run.returncode == 0, run.stderr
    uid, cap_eff, cap_bnd, no_new_privs = run.stdout.split("\n")[:4]
    mask = sum(1 << CAPABILITY_BITS[name] for name in kept_capabilities())
    assert uid == "0"
    assert int(cap_eff.split()[1], 16) == int(cap_bnd.split()[1], 16) == mask
    assert no_new_privs.split()[1] == "1"
    assert (cgroup / "init" / "cgroup.procs").read_text().split() != []  # moved out of the root
    assert (cgroup / "cgroup.subtree_control").read_text().split() == ["+memory", "+pids"]
    assert len((cgroup / "judge" / "worker" / "cgroup.procs").read_text().split()) == 1


@needs_root
def test_the_entrypoint_refuses_a_cgroup_v1_host_with_a_clear_message(tmp_path: Path) -> None:
    (tmp_path / "v1").mkdir()
    run = run_entrypoint(tmp_path / "v1" / "judge", "true")
    assert run.returncode == 70
    assert "not cgroup v2" in run.stderr


SANDBOX_PROBE = """
import json, sys
from pathlib import Path
from worker.sandbox.bwrap import BwrapSandbox
from worker.sandbox.types import Limits
from worker.settings import WorkerSettings

sandbox = BwrapSandbox.for_machine(WorkerSettings().machine(), gpu=False)
work = Path(sys.argv[1]) / "w"
work.mkdir()
ok = sandbox.run(["/bin/sh", "-c", "umask 077; id -u > out"], workdir=work, limits=Limits(20))
slow = sandbox.run(["/bin/sh", "-c", "sleep 60 & sleep 60"], workdir=work, limits=Limits(1))
out = work / "out"
print(json.dumps({"problems": sandbox.report.problems, "ok": str(ok.status),
                  "slow": str(slow.status), "message": ok.message,
                  "uid": out.read_text().strip() if out.exists() else None,
                  "owner": out.stat().st_uid if out.exists() else None}))
"""


@pytest.fixture
def world_reachable_dir() -> Iterator[Path]:
    """A scratch dir uid 65534 can reach, as the worker's /dev/shm work dirs are (pytest's own
    tmp_path sits under a 0700 directory)."""
    path = Path(tempfile.mkdtemp(prefix="fj-entrypoint-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@needs_root
def test_the_real_sandbox_works_with_only_the_kept_capabilities(world_reachable_dir: Path) -> None:
    keep = ",".join(f"+{name}" for name in kept_capabilities())
    run = subprocess.run(["setpriv", "--inh-caps=-all", f"--bounding-set=-all,{keep}",
                          "--no-new-privs", "--", sys.executable, "-c", SANDBOX_PROBE,
                          str(world_reachable_dir)], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    if found["problems"]:
        pytest.skip(f"this machine cannot sandbox at all: {found['problems']}")
    assert found["ok"].lower().endswith("ok"), found
    assert found["uid"] == "65534" and found["owner"] == 65534  # a uid owning nothing of ours
    assert "timeout" in found["slow"].lower(), found
