"""The documented deployment on a GPU host, driven for real: PostgreSQL + Redis (already
started by bench/gpu_cluster_check.sh), migrations, the API (compose's uvicorn command), the
control worker, and a GPU node started as a separate machine would be: `flashjudge worker --gpus
SPEC` with its own data directory and nothing but the broker URL in its environment.

    python3 bench/gpu_cluster.py overlap verdicts faults throughput --count 12

One head (API, control worker) serves every phase named, in order; each phase starts its node:
- overlap: one full judging's verdict pass, tests one at a time and FJ_OVERLAP_K at once, on the
  first GPU without the service (bench/verdict_overlap.py): wall times and every verdict compared
- verdicts: the corpus mix through the API, every verdict checked
- faults: 2 SIGKILLs of the GPU node + 1 Redis restart, every submission judged exactly once
- throughput: the same batch (--count) on one GPU (--gpus-one), then on all (--gpus), with each
  judging's stages from the logs (bench/cluster_timeline.py)

Each phase prints a table and appends a JSON line to $OUT/cluster.jsonl. Counts come from the
workers' own logs (judgings started per attempt, verdicts recorded) and the API (final states).
A CPU dry run (no GPU; c-program on a CPU worker): FJ_CLUSTER_MIX=correct-seq,wrong
FJ_CLUSTER_CASES=correct-seq FJ_CLUSTER_FAULT_CASE=correct-seq FJ_CLUSTER_SUITE=hw4-mini
FJ_CLUSTER_QUEUES=control,cpu ... --gpus none --gpus-one none.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster_procs import NODE_DATA, Procs, json_lines  # noqa: E402
from cluster_timeline import row, stage_means, summary, timelines  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "hostile"
OUT = Path(os.environ.get("OUT", "/tmp/fj-cluster"))
PORT = os.environ.get("FJ_CLUSTER_PORT", "8000")
URL = f"http://127.0.0.1:{PORT}"
# FJ_CLUSTER_MIX / FJ_CLUSTER_CASES / FJ_CLUSTER_FAULT_CASE: corpus cases instead of the GPU ones
# (a dry run of the plumbing on a CPU machine: correct-seq,wrong with --gpus none)
MIX = os.environ.get("FJ_CLUSTER_MIX", "cuda-correct,cuda-wrong,cuda-crash,gpu-infinite-kernel,"
                     "kernel-correct,kernel-infinite,cuda-course-makefile").split(",")
CASES = os.environ.get("FJ_CLUSTER_CASES", "cuda-correct,kernel-correct").split(",")
FAULT_CASE = os.environ.get("FJ_CLUSTER_FAULT_CASE", "cuda-correct")
REFINES = os.environ.get("FJ_CLUSTER_REFINE", "1") != "0"  # the head refines passed tests
BUDGET = {"until": float("inf")}  # time.monotonic() by which every phase must have ended


@dataclass
class Submitted:
    """One upload and what the API said of it."""

    case: str  # corpus directory
    id: int  # submission id
    sent: float  # time.time() just before the upload (the logs' clock)
    token: str  # the owner's API token (a student sees only their own submissions)
    verdict_at: float | None = None  # when the API first showed its verdict (status done)
    refined_at: float | None = None  # when the API first showed its refined times
    detail: dict = field(default_factory=dict)  # the last GET /api/submissions/{id}


def upload(client: httpx.Client, token: str, case: str) -> Submitted:
    directory = CORPUS / case
    meta = tomllib.loads((directory / "expected.toml").read_text())
    source = CORPUS / meta.get("sources", case)
    files = [("files", (p.name, p.read_bytes())) for p in sorted(source.iterdir())
             if p.is_file() and p.name != "expected.toml"]
    sent = time.time()
    response = client.post(f"{URL}/api/submissions", headers={"Authorization": f"Bearer {token}"},
                           data={"language": meta["language"]}, files=files)
    response.raise_for_status()
    return Submitted(case, response.json()["id"], sent, token)


def poll(client: httpx.Client, subs: list[Submitted], timeout_s: float,
         tick: object = None, refined: bool = True) -> None:
    """Until every submission has its verdict (and its refinement, where one follows and
    `refined`: the faults phase counts verdicts only, a refinement being best effort)."""
    deadline = min(time.monotonic() + timeout_s, BUDGET["until"])
    while time.monotonic() < deadline and not all(finished(s, refined) for s in subs):
        for s in subs:
            if not finished(s, refined):
                note(s, client.get(f"{URL}/api/submissions/{s.id}",
                                   headers={"Authorization": f"Bearer {s.token}"}).json())
        if callable(tick):
            tick()
        time.sleep(0.5)


def note(s: Submitted, detail: dict) -> None:
    s.detail = detail
    now = time.time()
    if detail.get("status") == "done" and s.verdict_at is None:
        s.verdict_at = now
    if detail.get("timing") and s.refined_at is None:
        s.refined_at = now


def finished(s: Submitted, refined: bool = True) -> bool:
    """Its verdict is shown, and its refined times where some test passed (refinement on)."""
    refines = refined and REFINES and (s.detail.get("passed") or 0) > 0
    return s.verdict_at is not None and (s.refined_at is not None or not refines)


def expected_ok(s: Submitted) -> bool:
    """Every test's verdict is one the corpus allows for this program."""
    meta = tomllib.loads((CORPUS / s.case / "expected.toml").read_text())
    tests = s.detail.get("tests") or []
    return bool(tests) and all(t["verdict"] in meta["verdicts"] for t in tests)


def report(phase: str, rows: list[dict], extra: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "cluster.jsonl").open("a") as f:
        f.write(json.dumps({"phase": phase, "rows": rows, **extra}) + "\n")
    print(f"== {phase}: {json.dumps(extra)}", flush=True)
    for line in rows:
        print("  " + " | ".join(f"{k}={v}" for k, v in line.items()), flush=True)


def exactly_once(procs: Procs, subs: list[Submitted]) -> dict:
    """Judgings started per attempt (never two) and verdicts recorded per submission (one)."""
    runs: dict[tuple[str, int], int] = {}
    for line in json_lines(procs.log("node")):
        msg = str(line.get("msg", ""))
        if msg.startswith("judging attempt "):
            key = (str(line.get("submission_id")), int(msg.split()[2].rstrip(":")))
            runs[key] = runs.get(key, 0) + 1
    recorded: dict[str, int] = {}
    for line in json_lines(procs.log("control")):
        if str(line.get("msg", "")).startswith("recorded verdict"):
            recorded[str(line.get("submission_id"))] = recorded.get(
                str(line.get("submission_id")), 0) + 1
    ids = {str(s.id) for s in subs}
    return {"attempts_judged_twice": sum(1 for k, n in runs.items() if k[0] in ids and n > 1),
            "verdicts_not_once": sum(1 for i in ids if recorded.get(i, 0) != 1),
            "judgings_started": sum(n for k, n in runs.items() if k[0] in ids),
            "lost": sum(1 for s in subs if s.verdict_at is None),
            "system_errors": sum(1 for s in subs if s.detail.get("verdict") == "SE")}


def phase_verdicts(procs: Procs, client: httpx.Client, tokens: list[str], gpus: str) -> bool:
    procs.start_node(gpus)
    subs = [upload(client, tokens[i], case) for i, case in enumerate(MIX)]  # one student each:
    # a student's second queued upload supersedes the first
    poll(client, subs, 300)
    rows = [{"case": s.case, "id": s.id, "verdict": s.detail.get("verdict"),
             "tests": ",".join(f"{t['id']}:{t['verdict']}" for t in s.detail.get("tests", [])),
             "gpu": s.detail.get("gpu_model"), "ok": expected_ok(s)} for s in subs]
    counts = exactly_once(procs, subs)  # the node stays: the faults phase takes it over (a
    # stop would wait for the sanitizer runs that follow a WA or RE)
    report("verdicts", rows, counts)
    return all(r["ok"] for r in rows) and not any(counts[k] for k in counts
                                                  if k != "judgings_started")


def phase_faults(procs: Procs, client: httpx.Client, tokens: list[str], count: int,
                 gpus: str) -> bool:
    procs.start_node(gpus)
    subs = [upload(client, tokens[i], FAULT_CASE) for i in range(count)]
    plan = [(1, "node"), (max(2, count // 2), "redis"), (max(3, count - 1), "node")]
    events: list[str] = []

    def tick() -> None:
        done = sum(s.verdict_at is not None for s in subs)
        while plan and plan[0][0] <= done:
            _, part = plan.pop(0)
            at = f"at {done} done, t={time.time() - subs[0].sent:.0f}s"
            if part == "node":
                procs.kill_node()
                events.append(f"node SIGKILL {at}; GPU processes 3 s later: "
                              f"{procs.gpu_leftovers(after_s=3)}")
                procs.start_node(gpus)
            else:
                procs.restart_redis()
                events.append(f"redis restart {at}")
    poll(client, subs, 300, tick, refined=False)
    counts = exactly_once(procs, subs)
    rows = [{"id": s.id, "verdict": s.detail.get("verdict"), "attempt": s.detail.get("attempt"),
             "seconds": round((s.verdict_at or s.sent) - s.sent, 1)} for s in subs]
    procs.stop_node(grace_s=20)  # a refinement still running may be cut: not counted here
    leftovers = procs.gpu_leftovers()
    report("faults", rows, {**counts, "events": events, "planned_not_done": plan,
                            "gpu_leftovers_after_stop": leftovers})
    return not plan and not any(v for k, v in counts.items() if k != "judgings_started") \
        and leftovers in ("none", "no nvidia-smi")


def phase_throughput(procs: Procs, client: httpx.Client, tokens: list[str], count: int,
                     gpus: str) -> bool:
    """`count` judgings of CASES on the node's GPUs: each one's stages, and the batch's
    throughput and latencies to the verdict and to the refined times."""
    procs.start_node(gpus)
    ready = procs.wait_node_live()
    subs = [upload(client, tokens[i], CASES[i % len(CASES)]) for i in range(count)]
    poll(client, subs, 480)
    lines = timelines({str(s.id): s.sent for s in subs}, procs.log("node"), procs.log("control"))
    rows = [{"case": s.case, "verdict": s.detail.get("verdict"), **row(str(s.id),
             lines[str(s.id)])} for s in subs]
    extra = {"gpus": gpus, "node_ready_s": ready, **summary(lines),
             "stage_means": stage_means(rows), **exactly_once(procs, subs)}
    procs.stop_node()
    extra["gpu_leftovers_after_stop"] = procs.gpu_leftovers()
    report(f"throughput gpus={gpus}", rows, extra)
    return extra["lost"] == 0 and extra["verdicts_not_once"] == 0


def phase_overlap(warm_gpu: str | None) -> bool:
    """bench/verdict_overlap.py on the first GPU (no service: the node is not started), while
    the speed of light is measured on `warm_gpu` into the node's cache (None: not here)."""
    env = {**os.environ, "FLASHJUDGE_DATA_DIR": NODE_DATA}  # the node's prepared inputs
    script = str(REPO / "bench" / "verdict_overlap.py")
    warm = subprocess.Popen([sys.executable, script, "--warm-speed", warm_gpu], cwd=REPO,
                            env=env) if warm_gpu else None
    done = subprocess.run([sys.executable, script], cwd=REPO, env=env, timeout=300)
    if warm is not None:
        warm.wait(timeout=300)
    return done.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("phases", nargs="+",
                        choices=["overlap", "verdicts", "faults", "throughput"])
    parser.add_argument("--count", type=int, default=12, help="judgings per throughput run")
    parser.add_argument("--fault-count", type=int, default=8)
    parser.add_argument("--gpus", default="all", help="the node's GPUs (verdicts, faults, the "
                        "second throughput run)")
    parser.add_argument("--gpus-one", default="0", help="the first throughput run's GPUs ('': "
                        "none, e.g. to run the two throughput runs in two device calls)")
    parser.add_argument("--budget-s", type=float, default=float("inf"),
                        help="every phase's waiting ends this long after the start (what was "
                             "not done by then is reported as lost)")
    parser.add_argument("--warm-gpu", default="1", help="where the speed of light is measured "
                        "during the overlap phase ('' : nowhere, the node measures it)")
    args = parser.parse_args()
    procs = Procs(OUT)
    results = {}
    started = time.monotonic()
    BUDGET["until"] = started + args.budget_s
    try:
        if "overlap" in args.phases:
            results["overlap"] = phase_overlap(args.warm_gpu)
        if set(args.phases) - {"overlap"}:
            tokens = procs.start_head(students=max(args.count, args.fault_count, len(MIX)))
            with httpx.Client(timeout=60) as client:
                for phase in [p for p in args.phases if p != "overlap"]:
                    results.update(run_phase(phase, procs, client, tokens, args))
    finally:
        procs.stop_all()
    for phase, ok in results.items():
        print(f"{phase}: {'PASS' if ok else 'FAIL'}")
    print(f"all phases in {time.monotonic() - started:.0f} s")
    return 0 if results and all(results.values()) else 1


def run_phase(phase: str, procs: Procs, client: httpx.Client, tokens: list[str],
              args: argparse.Namespace) -> dict[str, bool]:
    """One service phase (each a PASS/FAIL line); a phase that raises is a FAIL, not the end."""
    began = time.monotonic()
    try:
        if phase == "verdicts":
            return {phase: phase_verdicts(procs, client, tokens, args.gpus)}
        if phase == "faults":
            return {phase: phase_faults(procs, client, tokens, args.fault_count, args.gpus)}
        return {f"throughput gpus={g}": phase_throughput(procs, client, tokens, args.count, g)
                for g in (args.gpus_one, args.gpus) if g}
    except Exception as exc:  # noqa: BLE001 - reported, and the next phase still runs
        print(f"{phase}: {type(exc).__name__}: {exc}", flush=True)
        procs.stop_node(grace_s=5)
        return {phase: False}
    finally:
        print(f"-- {phase} took {time.monotonic() - began:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
