"""Where the time of each judging went, from the deployment's own logs (bench/gpu_cluster.py).

Every timestamp is a log line's, on one host's clock: the upload (the driver's own time.time()),
`judging attempt N` and `judged: ...` on the node (with the judging's phases and the worker that
ran it), `recorded verdict` on the control worker, `refining the times` and `refined times` on the
node, `recorded refined times` on the control worker. So the split between queue wait, the
verdict pass (speed-of-light wait, build, prepare, tests), recording, the wait for the refinement
and the refinement itself is measured, not guessed, and a serialisation shows up as one column
that grows with the batch or as a worker that sat idle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from cluster_procs import json_lines


def when(line: dict[str, Any]) -> float:
    """A log line's time as seconds since the epoch."""
    return datetime.fromisoformat(str(line["time"])).timestamp()


@dataclass
class Timeline:
    """One submission's moments (epoch seconds; None: not seen)."""

    upload: float  # the driver's POST
    started: float | None = None  # the judging that produced the verdict began
    judged: float | None = None  # its verdict pass ended on the worker
    recorded: float | None = None  # the control worker recorded the verdict
    refine_start: float | None = None  # the refinement task began
    refined: float | None = None  # the refinement ended on the worker
    final: float | None = None  # the control worker recorded the refined times
    worker: str = ""  # who judged it
    refiner: str = ""  # who refined it
    phases: dict[str, float] = field(default_factory=dict)  # the `judged` line's phases

    def done(self) -> float | None:
        """When the submission was complete: refined times recorded, else the verdict."""
        return self.final or self.recorded


def timelines(uploads: dict[str, float], node_log: Path, control_log: Path
              ) -> dict[str, Timeline]:
    """submission id -> its Timeline, for the submissions uploaded at `uploads` (id -> time)."""
    found = {sid: Timeline(t) for sid, t in uploads.items()}
    for line in json_lines(node_log):
        got = found.get(str(line.get("submission_id")))
        if got is not None:
            node_line(got, line)
    for line in json_lines(control_log):
        got = found.get(str(line.get("submission_id")))
        msg = str(line.get("msg", ""))
        if got is not None and msg.startswith("recorded verdict"):
            got.recorded = when(line)
        elif got is not None and msg.startswith("recorded refined times"):
            got.final = when(line)
    return found


def node_line(got: Timeline, line: dict[str, Any]) -> None:
    msg = str(line.get("msg", ""))
    if msg.startswith("judging attempt "):
        got.started = when(line)  # the last attempt's start is the one that counts
    elif msg.startswith("judged: "):
        got.judged, got.worker = when(line), str(line.get("worker", ""))
        got.phases = dict(line.get("phases") or {})
    elif msg.startswith("refining the times"):
        got.refine_start, got.refiner = when(line), str(line.get("worker", ""))
    elif msg.startswith("refined times"):
        got.refined = when(line)


def gap(later: float | None, earlier: float | None) -> float | None:
    return None if later is None or earlier is None else round(later - earlier, 2)


def row(sid: str, t: Timeline) -> dict[str, Any]:
    """One submission's line of the table: each stage's seconds."""
    return {"id": sid, "worker": t.worker.split("@")[0], "queue": gap(t.started, t.upload),
            **{k.removesuffix("_s"): round(v, 2) for k, v in t.phases.items()},
            "record": gap(t.recorded, t.judged), "to_verdict": gap(t.recorded, t.upload),
            "refine_wait": gap(t.refine_start, t.recorded),
            "refine": gap(t.refined, t.refine_start), "to_final": gap(t.done(), t.upload)}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 1) \
        if values else 0.0


def summary(lines: dict[str, Timeline]) -> dict[str, Any]:
    """The batch: throughput to verdicts and to final times, p50/p95 upload->verdict and
    upload->final, and each worker's busy share in the verdict pass and in the refinement."""
    ts = list(lines.values())
    start = min(t.upload for t in ts)
    verdicts = [t.recorded - t.upload for t in ts if t.recorded]
    finals = [d - t.upload for t in ts if (d := t.done())]
    last_verdict = max((t.recorded for t in ts if t.recorded), default=start) - start
    last_final = max((d for t in ts if (d := t.done())), default=start) - start
    return {"count": len(ts), "all_verdicts_s": round(last_verdict, 1),
            "all_final_s": round(last_final, 1),
            "verdicts_per_hour": round(3600 * len(verdicts) / last_verdict, 1)
            if last_verdict else None,
            "judgings_per_hour": round(3600 * len(finals) / last_final, 1) if last_final else None,
            "verdict_p50_s": percentile(verdicts, 0.5), "verdict_p95_s": percentile(verdicts, 0.95),
            "final_p50_s": percentile(finals, 0.5), "final_p95_s": percentile(finals, 0.95),
            "record_p95_s": percentile([r for t in ts if (r := gap(t.recorded, t.judged))
                                        is not None], 0.95),
            "workers": busy(ts, last_final)}


def busy(ts: list[Timeline], window_s: float) -> dict[str, dict[str, float]]:
    """worker -> seconds in verdict passes and in refinements, and its share of the window."""
    out: dict[str, dict[str, float]] = {}
    for t in ts:
        if t.worker and t.started and t.judged:
            w = out.setdefault(t.worker.split("@")[0], {"verdict_s": 0.0, "refine_s": 0.0})
            w["verdict_s"] += t.judged - t.started
        if t.refiner and t.refine_start and t.refined:
            w = out.setdefault(t.refiner.split("@")[0], {"verdict_s": 0.0, "refine_s": 0.0})
            w["refine_s"] += t.refined - t.refine_start
    for w in out.values():
        w["busy_share"] = (w["verdict_s"] + w["refine_s"]) / window_s if window_s else 0.0
        for key in w:
            w[key] = round(w[key], 2)
    return out


def stage_means(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The mean of each stage over the batch (which stage grows is where the time goes)."""
    keys = [k for k in rows[0] if k not in ("id", "worker")] if rows else []
    means = {}
    for key in keys:
        values = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
        if values:
            means[key] = round(sum(values) / len(values), 2)
    return means
