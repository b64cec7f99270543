"""The documented deployment on a GPU host, driven for real (issue 21): PostgreSQL + Redis (already
started by bench/gpu_cluster_check.sh), migrations, the API (compose's uvicorn command), the
control worker, and a GPU node started as a separate machine would be: `flashjudge worker --gpus
SPEC` with its own data directory and nothing but the broker URL in its environment.

    python3 bench/gpu_cluster.py verdicts   # the corpus mix through the API, every verdict checked
    python3 bench/gpu_cluster.py faults     # 2 SIGKILLs of the GPU node + 1 Redis restart
    python3 bench/gpu_cluster.py throughput --count 8 --gpus 0   # then --gpus all

Each phase prints a table and appends a JSON line to $OUT/cluster.jsonl. Counts come from the
workers' own logs (judgings started per attempt, verdicts recorded) and the API (final states).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster_procs import Procs, json_lines  # noqa: E402

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


@dataclass
class Submitted:
    """One upload and what the API said of it."""

    case: str  # corpus directory
    id: int  # submission id
    sent: float  # time.monotonic() at upload
    token: str  # the owner's API token (a student sees only their own submissions)
    verdict_at: float | None = None  # when its verdict was recorded (status done)
    refined_at: float | None = None  # when its timing refinement came back (AC only)
    detail: dict = field(default_factory=dict)  # the last GET /api/submissions/{id}


def upload(client: httpx.Client, token: str, case: str) -> Submitted:
    directory = CORPUS / case
    meta = tomllib.loads((directory / "expected.toml").read_text())
    source = CORPUS / meta.get("sources", case)
    files = [("files", (p.name, p.read_bytes())) for p in sorted(source.iterdir())
             if p.is_file() and p.name != "expected.toml"]
    response = client.post(f"{URL}/api/submissions", headers={"Authorization": f"Bearer {token}"},
                           data={"language": meta["language"]}, files=files)
    response.raise_for_status()
    return Submitted(case, response.json()["id"], time.monotonic(), token)


def poll(client: httpx.Client, subs: list[Submitted], timeout_s: float,
         tick: object = None) -> None:
    """Until every submission has its verdict (and its refinement, where one follows)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not all(finished(s) for s in subs):
        for s in subs:
            if not finished(s):
                note(s, client.get(f"{URL}/api/submissions/{s.id}",
                                   headers={"Authorization": f"Bearer {s.token}"}).json())
        if callable(tick):
            tick()
        time.sleep(0.5)


def note(s: Submitted, detail: dict) -> None:
    s.detail = detail
    now = time.monotonic()
    if detail.get("status") == "done" and s.verdict_at is None:
        s.verdict_at = now
    if detail.get("timing") and s.refined_at is None:
        s.refined_at = now


def finished(s: Submitted) -> bool:
    refines = s.detail.get("verdict") == "AC" and s.detail.get("gpu_model")
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
    print(f"== {phase}: {json.dumps(extra)}")
    for row in rows:
        print("  " + " | ".join(f"{k}={v}" for k, v in row.items()))


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
    poll(client, subs, 480)
    rows = [{"case": s.case, "id": s.id, "verdict": s.detail.get("verdict"),
             "tests": ",".join(f"{t['id']}:{t['verdict']}" for t in s.detail.get("tests", [])),
             "gpu": s.detail.get("gpu_model"), "ok": expected_ok(s)} for s in subs]
    counts = exactly_once(procs, subs)
    report("verdicts", rows, counts)
    return all(r["ok"] for r in rows) and not any(counts[k] for k in counts
                                                  if k != "judgings_started")


def phase_faults(procs: Procs, client: httpx.Client, tokens: list[str], count: int,
                 gpus: str) -> bool:
    procs.start_node(gpus)
    subs = [upload(client, tokens[i], FAULT_CASE) for i in range(count)]
    plan = [(1, "node"), (count // 2, "redis"), (count - 3, "node")]
    events: list[str] = []

    def tick() -> None:
        done = sum(s.verdict_at is not None for s in subs)
        while plan and plan[0][0] <= done:
            _, part = plan.pop(0)
            events.append(f"{part} at {done} done, t={time.monotonic() - subs[0].sent:.0f}s")
            procs.kill_node() if part == "node" else procs.restart_redis()
            if part == "node":
                procs.start_node(gpus)
    poll(client, subs, 540, tick)
    restart = next((s for s in events if s.startswith("redis")), "")
    counts = exactly_once(procs, subs)
    rows = [{"id": s.id, "verdict": s.detail.get("verdict"), "attempt": s.detail.get("attempt"),
             "seconds": round((s.verdict_at or 0) - s.sent, 1)} for s in subs]
    procs.stop_node()
    report("faults", rows, {**counts, "events": events, "redis_restart": restart,
                            "gpu_leftovers_after_stop": procs.gpu_leftovers()})
    return not any(v for k, v in counts.items() if k != "judgings_started")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if values else 0.0


def phase_throughput(procs: Procs, client: httpx.Client, tokens: list[str], count: int,
                     gpus: str) -> bool:
    procs.start_node(gpus)
    procs.wait_node_live(client)
    subs = [upload(client, tokens[i], CASES[i % len(CASES)]) for i in range(count)]
    poll(client, subs, 560)
    start = min(s.sent for s in subs)
    verdict = [s.verdict_at - s.sent for s in subs if s.verdict_at]
    refined = [s.refined_at - s.sent for s in subs if s.refined_at]
    last = max((s.refined_at or s.verdict_at or start) for s in subs) - start
    extra = {"gpus": gpus, "count": count, "all_done_s": round(last, 1),
             "judgings_per_hour": round(3600 * count / last, 1) if last else None,
             "verdict_p50_s": round(percentile(verdict, 0.5), 1),
             "verdict_p95_s": round(percentile(verdict, 0.95), 1),
             "refined_p50_s": round(percentile(refined, 0.5), 1),
             "refined_p95_s": round(percentile(refined, 0.95), 1),
             "lost": sum(1 for s in subs if s.verdict_at is None)}
    procs.stop_node()
    extra["gpu_leftovers_after_stop"] = procs.gpu_leftovers()
    report("throughput", [{"id": s.id, "case": s.case, "verdict": s.detail.get("verdict")}
                          for s in subs], extra)
    return extra["lost"] == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("phase", choices=["verdicts", "faults", "throughput"])
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--gpus", default="all")
    args = parser.parse_args()
    procs = Procs(OUT)
    try:
        tokens = procs.start_head(students=16)
        with httpx.Client(timeout=60) as client:
            if args.phase == "verdicts":
                ok = phase_verdicts(procs, client, tokens, args.gpus)
            elif args.phase == "faults":
                ok = phase_faults(procs, client, tokens, args.count, args.gpus)
            else:
                ok = phase_throughput(procs, client, tokens, args.count, args.gpus)
    finally:
        procs.stop_all()
    print(f"{args.phase}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

