"""The trusted timer's report (flashjudge-timer's JSON), read into dataclasses.

The timer is our own process (no student code runs in it) and writes the report in its own sandbox
where the student's runner cannot reach, so its numbers are facts about the run. What the runner
*claimed* (its CUDA-event times, its error text) is kept apart from what the timer measured, and
the rules of worker/harness/verify.py decide what to believe. A report that does not parse is
our failure (the judge's SE), named by the offending field.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_REPORT_BYTES = 16 << 20  # 50 batches x 64 calls is well under 1 MB
ROLES = ("probe", "warmup", "timed", "calibration")
INPUTS = ("official", "fresh", "random")


class ReportError(ValueError):
    """The timer's report is missing or malformed; `field` names what was wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"timer report, {field}: {message}")
        self.field = field


@dataclass(frozen=True)
class CallRecord:
    """One solve() call of a batch, as the timer checked it."""

    input: str  # "official" (the test's input), "fresh" (the judge's fresh input) or "random"
    nonfinite: int  # output values NaN/inf or never written when the batch's scan ran
    inputs_changed: int  # input values that differed from the timer's copy after the batch
    sampled_error: float  # max |output - exact| over the sampled rows (inf: NaN there)
    repeat_diff: float | None  # the test's input run again: max |output - first output|


@dataclass(frozen=True)
class BatchRecord:
    """One batch: the timer's own clock, the runner's claims, and the checks of every call."""

    index: int  # batch number, from 0
    role: str  # "probe" | "warmup" | "timed" | "calibration"
    calls: tuple[CallRecord, ...]  # in the order they ran
    replied: bool  # the runner answered (else the batch has no timing)
    reply_s: float  # timer's clock: request sent -> answer received
    bracket_s: float  # timer's clock: request sent -> end-of-batch scan finished
    flush_ms: float  # the timer's L2 flush before the batch (longer when the GPU was busy)
    runner_ok: bool  # the runner's answer said every call returned without a CUDA error
    protocol: str  # "ok", or the channel violation the timer saw
    events_ms: tuple[float, ...]  # the runner's CUDA-event time per call (claims; may be empty)

    @property
    def size(self) -> int:
        return len(self.calls)


@dataclass(frozen=True)
class TimerReport:
    """The whole run as the timer saw it."""

    mode: str  # "judge" or "calibrate"
    shape: tuple[int, int, int]  # B, N, d
    slots: int  # shared (Q, K, V, O) slots, the largest batch possible
    rows_per_call: int  # sampled rows checked per call
    too_slow: bool  # a call ran past the limit or a batch past its deadline
    runner: str  # "ok", or what went wrong on the runner's side
    batches: tuple[BatchRecord, ...]


def _number(doc: dict[str, Any], key: str, where: str) -> float:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ReportError(f"{where}.{key}", f"expected a number, got {value!r}")
    return float(value)


def _numbers(doc: dict[str, Any], key: str, where: str, count: int | None) -> list[float]:
    values = doc.get(key)
    if not isinstance(values, list) or (count is not None and len(values) != count):
        raise ReportError(f"{where}.{key}", f"expected a list of {count} numbers")
    return [_number({"v": v}, "v", f"{where}.{key}") for v in values]


def _call(batch: dict[str, Any], i: int, where: str) -> CallRecord:
    found = batch.get("inputs")
    inputs: list[Any] = found if isinstance(found, list) else []
    kind = inputs[i] if i < len(inputs) else None
    if kind not in INPUTS:
        raise ReportError(f"{where}.inputs", f"unknown input {kind!r}")
    count = len(inputs)
    repeat = _numbers(batch, "repeat_diff", where, count)[i]
    return CallRecord(
        input=kind, nonfinite=int(_numbers(batch, "nonfinite", where, count)[i]),
        inputs_changed=int(_numbers(batch, "inputs_changed", where, count)[i]),
        sampled_error=_numbers(batch, "sampled_error", where, count)[i],
        repeat_diff=None if repeat < 0 else repeat)


def _batch(doc: Any, where: str) -> BatchRecord:
    if not isinstance(doc, dict):
        raise ReportError(where, "expected an object")
    if doc.get("role") not in ROLES:
        raise ReportError(f"{where}.role", f"unknown role {doc.get('role')!r}")
    calls = int(_number(doc, "calls", where))
    events = _numbers(doc, "events_ms", where, None)
    return BatchRecord(
        index=int(_number(doc, "index", where)), role=doc["role"],
        calls=tuple(_call(doc, i, where) for i in range(calls)),
        replied=doc.get("replied") is True, reply_s=_number(doc, "reply_s", where),
        bracket_s=_number(doc, "bracket_s", where), flush_ms=_number(doc, "flush_ms", where),
        runner_ok=doc.get("runner_ok") is True, protocol=str(doc.get("protocol", "?")),
        events_ms=tuple(events))


def parse_report(doc: Any) -> TimerReport:
    """The report from its parsed JSON; raises ReportError naming the first bad field."""
    if not isinstance(doc, dict) or doc.get("version") != 1:
        raise ReportError("version", "not a version 1 timer report")
    if doc.get("mode") not in ("judge", "calibrate"):
        raise ReportError("mode", f"unknown mode {doc.get('mode')!r}")
    batches = doc.get("batches")
    if not isinstance(batches, list):
        raise ReportError("batches", "expected a list")
    shape = tuple(int(_number(doc, k, "report")) for k in ("B", "N", "d"))
    return TimerReport(
        mode=doc["mode"], shape=(shape[0], shape[1], shape[2]),
        slots=int(_number(doc, "slots", "report")),
        rows_per_call=int(_number(doc, "rows_per_call", "report")),
        too_slow=doc.get("too_slow") is True, runner=str(doc.get("runner", "?")),
        batches=tuple(_batch(b, f"batches[{i}]") for i, b in enumerate(batches)))


def read_report(path: Path) -> TimerReport:
    """The report file the timer wrote; raises ReportError when missing or malformed."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        raise ReportError("file", f"cannot read {path}: {exc.strerror}") from exc
    if len(raw) > MAX_REPORT_BYTES:
        raise ReportError("file", "larger than any report the timer writes")
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise ReportError("file", f"not JSON: {exc}") from exc
    return parse_report(doc)


def finite_or_inf(x: float) -> float:
    """NaN (never written by the timer, but a report is data) counts as the worst error."""
    return math.inf if math.isnan(x) else x
