"""One Nsight Compute run of a submission on a chosen test, summarised, its .ncu-rep kept.

Asked for from a submission's page and queued at low priority on the GPU queue. The submission is
rebuilt (with -lineinfo, so the report's source view has lines) and run on the test's real input
under `ncu` in the same sandbox as a judging; ncu profiles the first few kernel launches (replaying
each for its counters) and exports a .ncu-rep. Its CSV pages are then read by ncu again, also
sandboxed (the report file came from the submission's run), and parsed (worker/ncu_report.py).

ncu needs the GPU's performance counters. Where the driver restricts them to admin users
(NVreg_RestrictProfilingToAdminUsers=1), the sandbox's uid 65534 gets ERR_NVGPUCTRPERM and the
profile comes back with that error: the node must lift the restriction; we never run a
submission as root to profile it.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from testcases.prepared import prepare_suite
from testcases.suite import load_suite
from worker.feedback.diagnosis import (
    RunLayout,
    WorkArea,
    lineinfo_build_settings,
    run_layout,
    tool_binds,
)
from worker.feedback.ncu_report import KernelProfile, parse_profile
from worker.languages import get_language, infer_language
from worker.machine import Machine
from worker.running.build import build
from worker.running.classify import SystemFailure
from worker.running.fresh import fresh_workdir
from worker.sandbox.bwrap import BwrapSandbox, Limits, RunResult, Sandbox, read_regular_file
from worker.sandbox.gpu.gpu_run import NO_INJECTION
from worker.sandbox.workspace import make_workdir, remove_tree

SECTIONS = ("SpeedOfLight", "Occupancy", "WarpStateStats", "LaunchStats", "SourceCounters")
REPORT_NAME = "profile.ncu-rep"
PAGES = {"details": "details.csv", "raw": "raw.csv"}
COUNTERS_DENIED = "ERR_NVGPUCTRPERM"
NSIGHT_HOME = "/opt/nvidia/nsight-compute"  # where the CUDA image installs Nsight Compute


@dataclass(frozen=True)
class ProfileConfig:
    """The profile's budget (it runs at low priority, apart from judging)."""

    launch_count: int = 3  # kernel launches profiled (the longest one is the summary)
    run_limit_s: float = 300.0  # wall-time limit of the ncu run (replays are slow)
    import_limit_s: float = 60.0  # wall-time limit of each CSV export
    memory_bytes: int = 16 << 30  # host memory of the ncu run
    max_report_bytes: int = 256 << 20  # a larger .ncu-rep is not kept


@dataclass
class Profile:
    """What ncu said about one test of a submission."""

    test_id: str  # the test profiled (its real input)
    kernels: list[KernelProfile] = field(default_factory=list)  # each profiled launch
    report_path: str | None = None  # the .ncu-rep, judge-owned, for download (None: not kept)
    error: str | None = None  # why there is no profile (counters denied, no ncu, build failed)
    seconds: float = 0.0  # wall time of the whole profiling

    @property
    def main(self) -> KernelProfile | None:
        """The launch that took longest: the one worth reading."""
        timed = [k for k in self.kernels if k.duration_s is not None]
        return max(timed, key=lambda k: k.duration_s or 0.0) if timed else None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["main"] = self.main.to_dict() if self.main else None
        return data


def ncu_path(machine: Machine | None = None) -> str | None:
    """Nsight Compute's own ncu: the machine's (FLASHJUDGE_NCU), else the newest under /opt/nvidia
    (bound into the sandbox by tool_binds), else the toolkit's. The toolkit's bin/ncu is only a
    script that looks for /opt/nvidia/nsight-compute, which the sandbox does not see by itself."""
    machine = machine or Machine()
    found = shutil.which("ncu")
    installed = sorted(Path(NSIGHT_HOME).glob("*/ncu"))
    candidates = [machine.ncu or ""] + [str(p) for p in installed[-1:]]
    candidates += [found] if found else []
    candidates += [str(Path(h) / "bin" / "ncu") for h in (machine.cuda_home or "",
                                                          "/usr/local/cuda") if h]
    return next((os.path.realpath(c) for c in candidates if c and os.path.isfile(c)), None)


def ncu_argv(ncu: str, program: list[str], launch_count: int) -> list[str]:
    """The profiling run: a few launches, the summary sections, exported to /work."""
    sections = [arg for name in SECTIONS for arg in ("--section", name)]
    return [ncu, *sections, "--launch-count", str(launch_count), "--clock-control", "none",
            "--export", f"/work/{REPORT_NAME}", "--force-overwrite", *program]


def import_argv(ncu: str, page: str, log_name: str) -> list[str]:
    return [ncu, "--import", f"/work/{REPORT_NAME}", "--csv", "--page", page,
            "--log-file", f"/work/{log_name}"]


def profile(request: Any, cache_dir: str | Path, test_id: str, out_dir: str | Path,
            sandbox: Sandbox | None = None, config: ProfileConfig | None = None,
            machine: Machine | None = None) -> Profile:
    """Profile `request` (a JudgeRequest) on `test_id` on `machine`'s GPU; the .ncu-rep is moved
    into out_dir."""
    config, machine = config or ProfileConfig(), machine or Machine()
    result = Profile(test_id)
    started = time.monotonic()
    scratch = make_workdir("profile", machine.scratch)
    try:
        _profile(result, request, Path(cache_dir), Path(out_dir),
                 sandbox or BwrapSandbox.for_machine(machine, gpu=True), config,
                 WorkArea(scratch, machine))
    finally:
        remove_tree(scratch)
        result.seconds = time.monotonic() - started
    return result


def _profile(result: Profile, request: Any, cache_dir: Path, out_dir: Path, sandbox: Sandbox,
             config: ProfileConfig, area: WorkArea) -> None:
    ncu = ncu_path(area.machine)
    if ncu is None:
        result.error = "Nsight Compute (ncu) is not installed on this worker"
        return
    language = get_language(request.language or infer_language(request.files))
    outcome = build(language, request.files, lineinfo_build_settings(area.machine), sandbox,
                    area.scratch)
    if outcome.product is None:
        result.error = "the build failed: " + outcome.compile.log[-300:]
        return
    suite = load_suite(request.suite)
    prepared = prepare_suite(suite, cache_dir, tests=[result.test_id])[result.test_id]
    try:
        layout = run_layout(language, outcome.product, Path(prepared.input_path), cache_dir,
                            area.machine)
    except SystemFailure as exc:
        result.error = f"harness: {exc}"
        return
    _run_ncu(result, ncu, layout, sandbox, config, out_dir, area.machine.scratch)


def _run_ncu(result: Profile, ncu: str, layout: RunLayout, sandbox: Sandbox, config: ProfileConfig,
             out_dir: Path, scratch: Path | None) -> None:
    with fresh_workdir("ncu", layout.files, scratch=scratch) as workdir:
        limits = Limits(wall_s=config.run_limit_s, memory_bytes=config.memory_bytes,
                        file_size_bytes=4 << 30)
        # ncu is an injection of its own and refuses to start beside the judge's census; a
        # profile is never judged, so it runs without it
        run = sandbox.run(ncu_argv(ncu, layout.program, config.launch_count), workdir=workdir,
                          limits=limits, binds=[*layout.binds, *tool_binds(ncu)],
                          env={**layout.env, NO_INJECTION: "1"})
        report = read_regular_file(workdir, REPORT_NAME)
        if report is None:
            result.error = _why_no_report(run)
            return
        pages = {page: _export(ncu, page, name, workdir, sandbox, config)
                 for page, name in PAGES.items()}
        result.kernels = parse_profile(pages["details"], pages["raw"])
        if report.stat().st_size <= config.max_report_bytes:
            out_dir.mkdir(parents=True, exist_ok=True)
            kept = out_dir / f"{result.test_id}-{REPORT_NAME}"
            shutil.copyfile(report, kept)
            result.report_path = str(kept)


def _export(ncu: str, page: str, log_name: str, workdir: Path, sandbox: Sandbox,
            config: ProfileConfig) -> str:
    """One CSV page of the report, as text ("" when ncu could not write it)."""
    sandbox.run(import_argv(ncu, page, log_name), workdir=workdir, binds=tool_binds(ncu),
                limits=Limits(wall_s=config.import_limit_s, memory_bytes=4 << 30))
    path = read_regular_file(workdir, log_name)
    if path is None:
        return ""
    with open(path, "rb") as f:
        return f.read(16 << 20).decode("utf-8", errors="replace")


def _why_no_report(run: RunResult) -> str:
    text = f"{run.stdout_tail}\n{run.stderr_tail}"
    if COUNTERS_DENIED in text:
        return ("the GPU's performance counters are restricted to admin users on this node "
                "(ERR_NVGPUCTRPERM): set NVreg_RestrictProfilingToAdminUsers=0 to allow profiles")
    last = [line for line in text.splitlines() if line.strip()][-3:]
    return f"ncu wrote no report ({run.status}): " + " | ".join(last)
