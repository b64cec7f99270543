"""The two ways a run's process is prepared (the vfork launch through sh + setpriv, and the
preexec_fn fallback) confine a program alike, the program's time starts at the sandbox's ready
signal, not at our spawn, and the cgroup-lock warmer cleans up after itself."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from worker.sandbox.bwrap import BwrapSandbox, Limits, RunStatus
from worker.sandbox.launch import JOIN_FAILED, Launcher
from worker.sandbox.warm import PARK, MigrationWarmer

SHOW = "grep -E '^Max (file|core file) size' /proc/self/limits; grep CapEff /proc/self/status"


@pytest.fixture(params=["launcher", "preexec_fn"])
def launch_sandbox(request: pytest.FixtureRequest, sandbox: BwrapSandbox) -> Iterator[BwrapSandbox]:
    """The session's sandbox, launching one way or the other for this test."""
    saved = sandbox.launcher
    if request.param == "launcher" and saved is None:
        pytest.skip("sh/setpriv missing here: only the preexec_fn launch is available")
    sandbox.launcher = saved if request.param == "launcher" else None
    yield sandbox
    sandbox.launcher = saved


def test_both_launches_cap_files_and_drop_every_capability(launch_sandbox: BwrapSandbox,
                                                            workdir: Path) -> None:
    result = launch_sandbox.run(["sh", "-c", SHOW], workdir=workdir,
                                limits=Limits(wall_s=10, file_size_bytes=3 << 20))
    assert result.status is RunStatus.OK, result
    fsize, core, caps = (line.split() for line in result.stdout_tail.splitlines())
    assert fsize[3:5] == [str(3 << 20)] * 2  # soft and hard limits, in bytes
    assert core[4:6] == ["0", "0"]
    assert caps == ["CapEff:", "0000000000000000"]


def test_both_launches_enforce_the_exact_file_size(launch_sandbox: BwrapSandbox,
                                                   workdir: Path) -> None:
    ok = launch_sandbox.run(["sh", "-c", "head -c 1048576 /dev/zero > out"], workdir=workdir,
                            limits=Limits(wall_s=10, file_size_bytes=1 << 20))
    assert ok.status is RunStatus.OK, ok
    over = launch_sandbox.run(["sh", "-c", "head -c 1048577 /dev/zero > out2"], workdir=workdir,
                              limits=Limits(wall_s=10, file_size_bytes=1 << 20))
    assert over.status is RunStatus.OUTPUT_LIMIT, over


def test_both_launches_put_the_program_in_the_run_cgroup(launch_sandbox: BwrapSandbox,
                                                         workdir: Path) -> None:
    """A 64 MiB allocation under a 32 MiB cgroup limit is killed: the program is in the cgroup."""
    hog = "x=$(head -c 67108864 /dev/zero | tr '\\000' a); echo ${#x}"
    result = launch_sandbox.run(["sh", "-c", hog], workdir=workdir,
                                limits=Limits(wall_s=20, memory_bytes=32 << 20))
    assert result.status is RunStatus.MEMORY, result


def test_the_program_does_not_inherit_the_ready_pipe(sandbox: BwrapSandbox, workdir: Path) -> None:
    """Its stdin is /dev/null and it holds no descriptor beyond stdin, stdout and stderr."""
    result = sandbox.run(["sh", "-c", "readlink /proc/self/fd/0; ls /proc/self/fd | wc -l"],
                         workdir=workdir, limits=Limits(wall_s=10))
    assert result.status is RunStatus.OK, result
    stdin, count = result.stdout_tail.split()
    assert stdin == "/dev/null"
    assert int(count) == 4  # 0, 1, 2 and the fd ls itself opened on /proc/self/fd


def test_start_up_is_ours_not_the_programs(sandbox: BwrapSandbox, workdir: Path) -> None:
    """The sandbox's start-up is reported apart (setup_s), not in the program's time (wall_s)."""
    result = sandbox.run(["true"], workdir=workdir, limits=Limits(wall_s=10))
    assert result.status is RunStatus.OK, result
    assert result.setup_s > 0.0
    assert result.wall_s > 0.0


def test_a_cgroup_that_cannot_be_joined_stops_the_launch(sandbox: BwrapSandbox,
                                                         tmp_path: Path) -> None:
    """The wrapper refuses to exec bwrap unless every cgroup join worked."""
    launcher = sandbox.launcher
    if launcher is None:
        pytest.skip("sh/setpriv missing here")
    argv = launcher.argv(["true"], [str(tmp_path / "no-such-dir" / "cgroup.procs")], 4096, None)
    assert os.spawnv(os.P_WAIT, argv[0], argv) == JOIN_FAILED


def test_no_launcher_when_setpriv_is_needed_but_missing(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # sh is still found: it is looked up on PATH too
    (tmp_path / "sh").symlink_to("/bin/sh")
    assert Launcher.find(None, need_setpriv=True) is None
    assert Launcher.find(None, need_setpriv=False) is not None


def _parked_sleeps() -> list[int]:
    """Pids of processes running exactly the warmer's parked command."""
    wanted = "\0".join(PARK).encode() + b"\0"
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes() == wanted:
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def test_the_cgroup_warmer_leaves_nothing_behind(sandbox: BwrapSandbox) -> None:
    """Warming runs a parked process in two cgroups of its own; once closed, both are gone."""
    if sandbox.report.cgroups is None:
        pytest.skip("no cgroups here")
    before = set(_parked_sleeps())
    warmer = MigrationWarmer(sandbox.report.cgroups)
    warmer.started()
    warmer.ended()
    warmer.close()
    assert not any(path.exists() for path in warmer.cgroups)
    assert set(_parked_sleeps()) <= before
