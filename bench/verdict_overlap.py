"""What overlapping the verdict pass's tests saves on a GPU, and whether it changes anything.

Each case is judged on the first GPU (pinned by UUID as `flashjudge worker` pins it) with its
tests one at a time (k=1), then k at once (FLASHJUDGE_VERDICT_PARALLEL's mechanism,
worker/running/overlap.py), both with the GPU's own limits. The table gives the seconds of the
tests (build and preparation left out), how many tests were run again alone, and whether every
test's verdict and timing flags are the same. Exit status 1 if any differs.

    FJ_OVERLAP_CASES=cuda-correct,kernel-correct FJ_OVERLAP_K=4 \\
        python3 bench/verdict_overlap.py

FJ_OVERLAP_TESTS: the hw4 tests (default the ten small ones, where start-up is most of a test);
FLASHJUDGE_DATA_DIR: where the prepared inputs are (the cluster check's node's).
`--warm-speed GPU` instead measures the speed of light on that GPU into the same cache (the
cluster check does it on the second GPU meanwhile, so its node starts with it measured).
"""

from __future__ import annotations

import json
import os
import sys
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CORPUS = REPO / "tests" / "hostile"
CASES = os.environ.get("FJ_OVERLAP_CASES", "cuda-correct,kernel-correct").split(",")
TESTS = os.environ.get("FJ_OVERLAP_TESTS", "t01,t02,t03,t04,t05,t06,t07,t08,t09,t10")
K = int(os.environ.get("FJ_OVERLAP_K", "4"))
SUITE = os.environ.get("FJ_OVERLAP_SUITE", "hw4")  # hw4-mini for a dry run on the CPU
OUT = Path(os.environ.get("OUT", "/tmp/fj-cluster"))


def pin_gpu(spec: str) -> str:
    """Pin this process to one GPU the way a worker is pinned; its label ("cpu": none)."""
    from flashjudge_cli.commands.machine import judge_gpus

    gpus = judge_gpus(spec)
    if not gpus:
        return "cpu"
    os.environ.update(gpus[0].pin())
    return gpus[0].label()


def files_of(case: str) -> tuple[str, dict[str, bytes]]:
    meta = tomllib.loads((CORPUS / case / "expected.toml").read_text())
    source = CORPUS / meta.get("sources", case)
    return meta["language"], {p.name: p.read_bytes() for p in sorted(source.iterdir())
                              if p.is_file() and p.name != "expected.toml"}


def judged(case: str, k: int) -> dict:
    """One judging of `case` with up to k tests at once: its figures and verdicts."""
    from testcases.gpu_limits import suite_on_gpu
    from testcases.suite import load_suite
    from worker.celery_adapter.heartbeat import worker_gpu_model
    from worker.pipeline import JudgeEvent, JudgeRequest, judge
    from worker.running.overlap import Overlap
    from worker.settings import WorkerSettings

    settings = WorkerSettings()
    language, files = files_of(case)
    gpu = worker_gpu_model()
    suite = load_suite(SUITE) if gpu == "cpu" else suite_on_gpu(load_suite(SUITE), gpu)
    config = settings.judge_config(suite=suite, overlap=Overlap(
        k=k, alone_share=settings.verdict_alone_share,
        memory_bytes=int(settings.verdict_parallel_gb * (1 << 30))))
    events: list[JudgeEvent] = []
    began = time.monotonic()
    result = judge(JudgeRequest(language, files, SUITE, TESTS.split(",")), settings.cache_dir,
                   on_event=events.append, config=config)
    wall = time.monotonic() - began
    starts = [e.test_id for e in events if e.kind == "test-start"]
    return {"case": case, "k": k, "tests_s": round(wall - result.compile.seconds
                                                   - result.prepare_s, 2),
            "run_s": round(sum(t.wall_s for t in result.tests), 2),
            "rerun_alone": len(starts) - len(set(starts)),
            "verdicts": [f"{t.id}:{t.verdict}" for t in result.tests],
            "flags": [sorted(f.get("code", "") for f in t.timing_flags) for t in result.tests],
            "system_error": result.system_error}


def warm_speed(spec: str) -> int:
    """`--warm-speed GPU`: measure the node's speed of light on that GPU into the node's cache
    now (what each GPU worker otherwise does at its first start, ~1 min, judging waiting)."""
    from worker.feedback.block import worker_speed
    from worker.settings import WorkerSettings

    label = pin_gpu(spec)
    settings = WorkerSettings()
    began = time.monotonic()
    speed = worker_speed(settings.cache_dir, SUITE, settings.machine())
    print(f"  speed of light on {label}: {'measured' if speed else 'none'} in "
          f"{time.monotonic() - began:.0f} s", flush=True)
    return 0


def main() -> int:
    if sys.argv[1:2] == ["--warm-speed"]:
        return warm_speed(sys.argv[2])
    gpu = pin_gpu(os.environ.get("FJ_OVERLAP_GPU", "0"))
    print(f"== overlap: {gpu}, tests {TESTS}, k=1 vs k={K}", flush=True)
    rows, same = [], True
    for case in CASES:
        alone, together = judged(case, 1), judged(case, K)
        agree = (alone["verdicts"] == together["verdicts"]
                 and alone["flags"] == together["flags"]) and not together["system_error"]
        same = same and agree
        saved = 1 - together["tests_s"] / alone["tests_s"] if alone["tests_s"] else 0.0
        for got in (alone, together):
            print(f"  {case} k={got['k']}: tests {got['tests_s']} s (runs' own {got['run_s']} s)"
                  f", rerun alone {got['rerun_alone']}, {' '.join(got['verdicts'])}", flush=True)
        print(f"  {case}: k={K} saves {100 * saved:.0f}% of the tests' time; verdicts and flags "
              f"{'the same' if agree else 'DIFFER'}", flush=True)
        rows += [alone, together]
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "cluster.jsonl").open("a") as f:
        f.write(json.dumps({"phase": "overlap", "gpu": gpu, "k": K, "rows": rows,
                            "same": same}) + "\n")
    print(f"overlap: verdicts {'the same' if same else 'DIFFER'} with k=1 and k={K}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
