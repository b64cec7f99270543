"""The preflight report: what this machine protects, and refusing to start when it cannot."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from worker.sandbox.bwrap import BwrapSandbox, Limits, RunStatus, SandboxUnavailable, preflight
from worker.sandbox.cgroups import sweep_stale
from worker.sandbox.preflight import bwrap_environment, reachable_by
from worker.sandbox.types import GpuAccess
from worker.settings import WorkerSettings


def test_this_machine_is_fully_protected(sandbox: BwrapSandbox) -> None:
    report = preflight(bwrap=sandbox.report.bwrap)
    assert report.secure and report.problems == ()
    assert report.user_namespaces
    assert report.cgroup_version in (1, 2)
    assert "user namespaces: yes" in report.summary()


def test_missing_bubblewrap_refuses_to_start(sandbox: BwrapSandbox) -> None:
    with pytest.raises(SandboxUnavailable, match="bubblewrap not found"):
        preflight(bwrap="/nonexistent/bwrap")


def test_insecure_mode_runs_and_says_so_on_every_result(sandbox: BwrapSandbox,
                                                         workdir: Path) -> None:
    loose = BwrapSandbox(insecure=True, bwrap="/nonexistent/bwrap")
    assert not loose.report.secure
    assert "INSECURE" in loose.report.summary()
    result = loose.run(["sh", "-c", "echo made > out; echo $HOME", "/work/in"], workdir=workdir,
                       limits=Limits(wall_s=5))
    assert result.status is RunStatus.OK
    assert result.message.startswith("INSECURE")
    assert (workdir / "out").read_text() == "made\n"
    assert result.stdout_tail == f"{workdir}\n"


def test_secure_results_carry_no_insecure_mark(sandbox: BwrapSandbox, workdir: Path) -> None:
    result = sandbox.run(["true"], workdir=workdir, limits=Limits(wall_s=5))
    assert result.status is RunStatus.OK and "INSECURE" not in result.message


def test_bundled_bwrap_gets_its_libraries_but_the_program_does_not(
    sandbox: BwrapSandbox, workdir: Path
) -> None:
    """A bundle as scripts/bwrap-bundle.sh lays it out: bwrap next to lib/ with its libraries."""
    bundle = Path(tempfile.mkdtemp(prefix="fj-bundle-", dir=workdir.parent))
    try:
        bundle.chmod(0o755)
        assert sandbox.report.bwrap is not None
        shutil.copy(sandbox.report.bwrap, bundle / "bwrap")
        assert bwrap_environment(str(bundle / "bwrap")) == {}  # a plain bwrap: no library path
        (bundle / "lib").mkdir(mode=0o755)
        for lib in ("libcap.so.2", "libselinux.so.1", "libpcre2-8.so.0"):
            found = next(Path("/").glob(f"usr/lib*/**/{lib}"), None)
            if found is None:
                pytest.skip(f"{lib} not installed here")
            shutil.copy(found, bundle / "lib" / lib)
        assert bwrap_environment(str(bundle / "bwrap")) == {"LD_LIBRARY_PATH": str(bundle / "lib")}
        bundled = BwrapSandbox(bwrap=str(bundle / "bwrap"))
        result = bundled.run(["sh", "-c", "echo ${LD_LIBRARY_PATH:-unset}"], workdir=workdir,
                             limits=Limits(wall_s=5))
    finally:
        shutil.rmtree(bundle)
    assert bundled.report.bwrap == str(bundle / "bwrap")
    assert result.stdout_tail == "unset\n"


def test_a_bundle_named_in_the_environment_is_passed_in_by_the_edge(
        monkeypatch, tmp_path: Path, sandbox: BwrapSandbox) -> None:
    """FLASHJUDGE_BWRAP reaches preflight through worker.settings, never read by the sandbox."""
    monkeypatch.setenv("FLASHJUDGE_BWRAP", sandbox.report.bwrap)
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on the PATH
    with pytest.raises(SandboxUnavailable, match="bubblewrap not found"):
        preflight()
    assert preflight(bwrap=WorkerSettings().machine().bwrap).bwrap == sandbox.report.bwrap


def test_reachability_follows_directory_permissions(workdir: Path) -> None:
    tmp_path = workdir
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "in").write_text("x")
    tmp_path.chmod(0o755)
    open_dir = tmp_path / "open"
    open_dir.mkdir(mode=0o755)
    (open_dir / "in").write_text("x")
    (open_dir / "in").chmod(0o644)
    if os.geteuid() != 0:
        pytest.skip("ownership checks need a root worker")
    assert not reachable_by(private / "in", 65534)
    assert reachable_by(open_dir / "in", 65534)
    assert not reachable_by(open_dir / "in", 65534, write=True)


def test_gpu_access_refuses_a_missing_device(monkeypatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "97,0")
    with pytest.raises(SandboxUnavailable, match="/dev/nvidia97"):
        GpuAccess.for_visible_device(WorkerSettings().machine().gpu_device)


def test_stale_run_cgroups_of_a_dead_worker_are_swept(sandbox: BwrapSandbox) -> None:
    layout = sandbox.report.cgroups
    assert layout is not None
    dead_pid = 4_000_000  # above pid_max: no such process
    stale = [parent / f"run-{dead_pid}-deadbeef" for parent in layout.parents.values()]
    for path in stale:
        path.mkdir()
    assert sweep_stale(layout) == len(stale)
    assert not any(path.exists() for path in stale)


def test_insecure_without_cgroups_still_kills_on_timeout(workdir: Path,
                                                         sandbox: BwrapSandbox) -> None:
    bwrap, nowhere = sandbox.report.bwrap, "/no/such/cgroup"
    with pytest.raises(SandboxUnavailable, match="cgroups unusable"):
        BwrapSandbox(bwrap=bwrap, cgroup_root=nowhere)
    loose = BwrapSandbox(insecure=True, bwrap=bwrap, cgroup_root=nowhere)
    result = loose.run(["sleep", "30"], workdir=workdir, limits=Limits(wall_s=0.5))
    assert result.status is RunStatus.TIMEOUT
    assert result.message.startswith("INSECURE")
