"""Timer reports written as flashjudge-timer writes them, for the tests of the rules that read them.

The numbers model a kernel of 1 ms per call on a worker whose batch overhead is 0.2 ms: probes,
two warm-ups (the judge's fresh input, the test's input again), then five timed batches.
"""

from __future__ import annotations

from typing import Any


def batch(index: int, role: str, calls: int = 4, per_call_ms: float = 1.0,
          overhead_ms: float = 0.2, **over: Any) -> dict[str, Any]:
    """One batch as the timer reports it: honest unless `over` says otherwise."""
    events = [per_call_ms * (1 + 0.001 * ((index + i) % 5)) for i in range(calls)]
    doc = {
        "index": index, "role": role, "calls": calls, "replied": True,
        "reply_s": (sum(events) + 0.05) / 1e3, "bracket_s": (sum(events) + overhead_ms) / 1e3,
        "flush_ms": 0.05, "runner_ok": True, "protocol": "ok", "text": "",
        "events_ms": events, "inputs": ["random"] * calls, "nonfinite": [0] * calls,
        "inputs_changed": [0] * calls, "sampled_error": [2e-6] * calls,
        "repeat_diff": [-1] * calls,
    }
    doc.update(over)
    return doc


def scaled(index: int, factor: float) -> list[float]:
    """Event times `factor` times the honest ones (still varying, as measured times do)."""
    return [e * factor for e in batch(index, "timed")["events_ms"]]


def report(timed: list[dict[str, Any]] | None = None, **over: Any) -> dict[str, Any]:
    """Probes, two warm-ups (fresh input, test's input again), five timed batches."""
    b0 = batch(0, "probe", 1, inputs=["official"], sampled_error=[1.5e-6])
    b2 = batch(2, "warmup", inputs=["random", "fresh", "random", "random"])
    b3 = batch(3, "warmup", inputs=["official", "random", "random", "random"],
               repeat_diff=[0.0, -1, -1, -1])
    timed = timed if timed is not None else [batch(i, "timed") for i in range(4, 9)]
    doc = {"version": 1, "mode": "judge", "B": 4, "N": 1024, "d": 64, "slots": 64,
           "rows_per_call": 64, "too_slow": False, "runner": "ok",
           "batches": [b0, batch(1, "probe", 1), b2, b3, *timed]}
    doc.update(over)
    return doc
