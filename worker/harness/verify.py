"""What the judge believes of a timed cuda-kernel run: pure rules over the trusted timer's report.

The timer (T) brackets every batch of solve() calls with its own clock, one call's turn after the
other: it writes a call's inputs into its slot only when the call's turn comes, asks for that call
alone, and scans its output the moment it answers; the bracket runs from the first call's inputs to
the last call's scan, and every output is checked. The runner (S, where the
student's code lives) also reports CUDA-event times per call: precise, and the figure the old
in-process harness ranked by, but only a claim. The rules:

* Any output NaN or unwritten at the end of its own call, wrong on a sampled row, or different
  when the test's input is run again: the run is wrong (WA), whatever the timing. Work done for
  another call cannot count: before its turn a call's inputs do not exist, after it its output
  has been checked.
* S's event times rank when they are consistent with T's bracket: their sum is no more than the
  bracket, and no less than the bracket minus this worker's calibrated overhead (measured with
  our own runner, where every byte of the process is ours) and its noise. A batch where they are
  not counts by T's bracket less the overhead; a few such batches (one, or up to a fifth) are
  hiccups of the host, more and every batch counts by T's clock and the result says why (a forged
  timer cannot win: a batch it forges counts by the clock either way).
* Held from the ranking, with a reason a TA can read: timed calls less precise than the checked
  first call, a figure under the GPU's speed of light, messages out of turn on the channel, or
  the GPU kept busy while solve() was not running.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from worker.harness.timer_report import BatchRecord, TimerReport, finite_or_inf

CLOCK_SLACK_REL = 1e-3  # the GPU's and the host's clocks may disagree by this (ppm in practice)
CLOCK_SLACK_S = 10e-6  # plus this, per batch
NOISE_K = 4.0  # overhead may exceed its calibrated mean by this many noise widths...
REL_SLACK = 0.01  # ...or by 1% of the bracket...
OVERHEAD_SLACK = 0.2  # ...or by a fifth of the overhead itself, whichever is larger (what a forger
# could hide). The host's share of a batch (the runner's per-call loop, waking up) varies between
# runs: honest twins on an H100 (2026-11-24) ran up to 17% over the calibrated overhead.
ABS_SLACK_S = 50e-6  # plus the wake-up jitter of one socket round trip
PRECISION_FACTOR = 2.0  # later calls may be this much less precise than the first call...
PRECISION_FLOOR = 1e-5  # ...or this imprecise, whichever is larger (honest fp32 stays below)
SLOPPY_SHARE = 0.05  # held when more than 5% of later calls are less precise (2 at least)
REPEAT_FACTOR = 4.0  # the test's input run again may differ by this many first-call errors
BUSY_FACTOR = 3.0  # the timer's L2 flush may take this many times its idle time...
BUSY_ABS_MS = 0.2  # ...plus this, before the GPU counts as busy between batches
LIGHT_MARGIN = 0.9  # as worker/feedback/flagging.py: under 0.9x the speed of light is impossible
MAX_HICCUPS = 1  # one inconsistent timed batch is a hiccup of the host: ranked by the clock...
HICCUP_SHARE = 0.2  # ...or up to a fifth of them (an honest kernel on an H100, 2026-11-24: 5 of
# 50 batches ran 0.6 ms over the calibrated overhead, the host scheduling the runner late)...
MIN_BATCHES_FOR_HICCUP = 3  # ...when there are at least this many timed batches
IDENTICAL_MIN_CALLS = 5  # event times all bit-identical over this many calls...
IDENTICAL_MIN_MS = 0.05  # ...each longer than this, cannot be measured ones


@dataclass(frozen=True)
class Calibration:
    """This worker's overhead of a batch beyond its calls' event times, with our own runner."""

    fixed_s: float  # per batch: request, reply, the end-of-batch scan, waking up
    per_call_s: float  # per call: the runner's loop between one call's events and the next
    noise_s: float  # robust spread of the overhead between batches
    flush_ms: float  # the timer's L2 flush on an otherwise idle GPU (median)

    def overhead_s(self, calls: int) -> float:
        return self.fixed_s + self.per_call_s * calls


@dataclass(frozen=True)
class Flag:
    """Something the judge could not show honest, in words a TA can act on."""

    code: str  # stable identifier, e.g. "events-inconsistent"
    reason: str  # one paragraph for the TA
    holds: bool  # the result is held from the ranking until a TA clears it


@dataclass(frozen=True)
class TimingVerdict:
    """What the judge concludes from one timed run."""

    ranked_s: float | None  # the per-call time that ranks (None: no timed batch finished)
    source: str  # "events" (S's CUDA events, consistent), "bracket" (T's clock) or "none"
    per_batch_s: tuple[float, ...]  # per-call time of each timed batch, from `source`
    events_s: float | None  # S's claimed mean per call over the timed batches
    bracket_s: float | None  # T's bracket per call, less the calibrated overhead
    wrong: str | None  # why an output was wrong (the judge's WA); None when all were right
    flags: tuple[Flag, ...]  # in the order found
    timed_calls: int  # calls in the timed batches

    @property
    def held(self) -> bool:
        return any(f.holds for f in self.flags)

    def reasons(self) -> str:
        return " ".join(f"[{f.code}] {f.reason}" for f in self.flags)


def fit_calibration(report: TimerReport) -> Calibration:
    """The overhead as fixed + per-call, fitted to a calibration run by least squares."""
    rows = [(b.size, b.bracket_s - sum(b.events_ms) / 1e3) for b in report.batches
            if b.replied and len(b.events_ms) == b.size]
    if len({c for c, _ in rows}) < 2 or len(rows) < 6:
        raise ValueError("calibration needs at least 6 answered batches of 2 sizes")
    cs, us = [float(c) for c, _ in rows], [u for _, u in rows]
    slope, intercept = statistics.linear_regression(cs, us)
    residuals = [u - (intercept + slope * c) for c, u in rows]
    mad = statistics.median(abs(r) for r in residuals)
    flush = statistics.median(b.flush_ms for b in report.batches)
    return Calibration(max(intercept, 0.0), max(slope, 0.0), 1.4826 * mad, flush)


def _where(b: BatchRecord, i: int) -> str:
    return f"batch {b.index} ({b.role}), call {i + 1} of {b.size}"


def wrong_outputs(report: TimerReport, tolerance: float) -> str | None:
    """The first wrong output of any answered batch, in words; None when every one was right."""
    for b in report.batches:
        if not b.replied or not b.runner_ok:
            continue
        for i, c in enumerate(b.calls):
            on = "the test's input" if c.input == "official" else f"a fresh {c.input} input"
            if c.nonfinite:
                return (f"{_where(b, i)}: {c.nonfinite} output values were NaN or not yet "
                        "written when solve() had returned (each call must finish its own "
                        "output before it returns: work still running, or left for a later "
                        "call, is not allowed)")
            if finite_or_inf(c.sampled_error) > tolerance:
                return (f"{_where(b, i)}: wrong on {on}, max error {c.sampled_error:.3g} on "
                        f"{report.rows_per_call} sampled rows (tolerance {tolerance:g})")
            if c.repeat_diff is not None and finite_or_inf(c.repeat_diff) > tolerance:
                return (f"{_where(b, i)}: the test's input run again gave another output "
                        f"(max difference {c.repeat_diff:.3g})")
    return None


def _valid_events(b: BatchRecord) -> bool:
    return len(b.events_ms) == b.size and all(math.isfinite(e) and e > 0 for e in b.events_ms)


def _inconsistency(b: BatchRecord, cal: Calibration) -> str | None:
    """Why batch b's event times cannot be the time its calls took, or None."""
    claimed = sum(b.events_ms) / 1e3
    unaccounted = b.bracket_s - claimed
    expected = cal.overhead_s(b.size)
    allowed = expected + max(NOISE_K * cal.noise_s, REL_SLACK * b.bracket_s,
                             OVERHEAD_SLACK * expected) + ABS_SLACK_S
    if unaccounted < -(CLOCK_SLACK_REL * b.bracket_s + CLOCK_SLACK_S):
        why = "more than the judge's own clock saw"
    elif unaccounted > allowed:
        why = (f"{unaccounted * 1e3:.3f} ms less than the judge's clock saw, where this "
               f"worker's overhead is {expected * 1e3:.3f} ms")
    else:
        return None
    return (f"in batch {b.index} solve()'s own CUDA-event times add up to {claimed * 1e3:.3f} ms, "
            f"{why} (request to checked output: {b.bracket_s * 1e3:.3f} ms)")


def events_flag(timed: list[BatchRecord], cal: Calibration) -> Flag | None:
    """Why the runner's event times cannot rank (missing, identical, inconsistent), or None."""
    tail = " The ranked time is the judge's own clock instead."
    if not all(_valid_events(b) for b in timed):
        return Flag("events-missing", "solve()'s runner did not report a valid CUDA-event time "
                    "for every timed call." + tail, holds=False)
    values = [e for b in timed for e in b.events_ms]
    if (len(values) >= IDENTICAL_MIN_CALLS and len(set(values)) == 1
            and values[0] > IDENTICAL_MIN_MS):
        return Flag("events-identical", f"all {len(values)} reported CUDA-event times are exactly "
                    f"{values[0]:.6g} ms: measured times always vary." + tail, holds=False)
    bad = [(b, why) for b in timed if (why := _inconsistency(b, cal))]
    hiccups = max(MAX_HICCUPS, HICCUP_SHARE * len(timed))
    if len(bad) > hiccups or (bad and len(timed) < MIN_BATCHES_FOR_HICCUP):
        b, why = bad[0]
        return Flag("events-inconsistent", f"{why}; {len(bad)} of {len(timed)} timed batches "
                    "disagree. The event times were forged or interposed, or solve() left work "
                    "running." + tail, holds=False)
    return None


def per_batch_figures(timed: list[BatchRecord], cal: Calibration, trust_events: bool
                      ) -> tuple[float, ...]:
    """Each timed batch's time per call: its events when trusted and consistent (a lone
    inconsistent batch, a hiccup of the host, counts by the judge's clock), else the clock."""
    return tuple(sum(b.events_ms) / 1e3 / b.size
                 if trust_events and _inconsistency(b, cal) is None
                 else bracket_per_call(b, cal) for b in timed)


def bracket_per_call(b: BatchRecord, cal: Calibration) -> float:
    """T's bracket of batch b per call, less the calibrated overhead (never below 0)."""
    return max(b.bracket_s - cal.overhead_s(b.size), 0.0) / b.size


def precision_flag(report: TimerReport, first_error: float | None = None) -> Flag | None:
    """Held when later calls are less precise than the first (the checked) call: more than
    SLOPPY_SHARE of them off by over max(2x its error, 1e-5), or the test's input run again
    differing from its first output. (Not the single worst call: the worst of a thousand honest
    calls is naturally worse than one; a share bounds what sloppy calls can buy.) The first
    call's error is the larger of its sampled rows' and, when known, its whole output's
    (`first_error`, from the judge's full comparison): 64 rows can come out lucky, and an honest
    kernel's later rows then look worse (t20 on an H100: first call 1.2e-5 sampled, 3.1e-5 in
    full, later calls up to 3e-5)."""
    answered = [b for b in report.batches if b.replied and b.runner_ok]
    if not answered or answered[0].index != 0 or not answered[0].calls:
        return None
    first = max(finite_or_inf(answered[0].calls[0].sampled_error), first_error or 0.0)
    later = [finite_or_inf(c.sampled_error) for b in answered[1:] for c in b.calls]
    bound = max(PRECISION_FACTOR * first, PRECISION_FLOOR)
    sloppy = [e for e in later if e > bound]
    repeats = [finite_or_inf(c.repeat_diff) for b in answered for c in b.calls
               if c.repeat_diff is not None]
    repeat_bound = max(REPEAT_FACTOR * first, PRECISION_FLOOR)
    if len(sloppy) >= 2 and len(sloppy) > SLOPPY_SHARE * len(later):
        why = (f"{len(sloppy)} of {len(later)} later calls are off by up to {max(sloppy):.3g} "
               f"on sampled rows, the first (checked) call by {first:.3g}")
    elif repeats and max(repeats) > repeat_bound:
        why = (f"the test's input run again differs from its first output by "
               f"{max(repeats):.3g}, its first error being {first:.3g}")
    else:
        return None
    return Flag("less-precise-timed", f"Timed calls less precise than checked: {why} (e.g. "
                "half or TF32 arithmetic once the checked call is over).", holds=True)


def busy_flag(timed: list[BatchRecord], cal: Calibration) -> Flag | None:
    """Held when the GPU stayed busy between batches (the timer's flush ran slow)."""
    if not timed:
        return None
    typical = statistics.median(b.flush_ms for b in timed)
    if typical <= BUSY_FACTOR * cal.flush_ms + BUSY_ABS_MS:
        return None
    return Flag("gpu-busy", f"The GPU stayed busy while solve() was not running: the judge's "
                f"cache flush between batches took {typical:.3f} ms instead of about "
                f"{cal.flush_ms:.3f} ms (work kept running in the background).", holds=True)


def channel_flag(report: TimerReport) -> Flag | None:
    """Held when anything but one answer per request came over the channel."""
    bad = [b for b in report.batches if b.protocol != "ok"]
    if not bad:
        return None
    return Flag("channel", f"batch {bad[0].index}: {bad[0].protocol} ({len(bad)} batches in "
                "all): a thread or a forked child wrote to the judge's channel.", holds=True)


def other_flags(report: TimerReport, ranked: float | None, least_s: float | None) -> list[Flag]:
    """Inputs written to (not held), a figure under the speed of light (held)."""
    flags = []
    changed = sum(c.inputs_changed for b in report.batches for c in b.calls)
    if changed:
        flags.append(Flag("inputs-modified", f"solve() wrote into its const inputs ({changed} "
                          "values in all).", holds=False))
    if ranked is not None and least_s and ranked < LIGHT_MARGIN * least_s:
        flags.append(Flag("below-floor", f"{ranked * 1e3:.4f} ms per call is under this GPU's "
                          f"speed of light for the test ({least_s * 1e3:.4f} ms).", holds=True))
    return flags


def judge_timing(report: TimerReport, cal: Calibration, tolerance: float,
                 least_s: float | None = None, first_error: float | None = None
                 ) -> TimingVerdict:
    """The verdict on one run: correctness, the figure that ranks, and the flags. `first_error`:
    the first call's max error over its whole output, when the judge compared it."""
    timed = [b for b in report.batches if b.role == "timed" and b.replied and b.runner_ok]
    calls = sum(b.size for b in timed)
    valid = bool(timed) and all(_valid_events(b) for b in timed)
    events = sum(sum(b.events_ms) for b in timed) / 1e3 / calls if valid else None
    bracket = sum(bracket_per_call(b, cal) * b.size for b in timed) / calls if calls else None
    flags = [f for f in (channel_flag(report),) if f]
    doubt = events_flag(timed, cal) if timed else None
    if doubt:
        flags.append(doubt)
    source = "none" if not timed else "bracket" if doubt else "events"
    per_batch = per_batch_figures(timed, cal, trust_events=doubt is None)
    ranked = sum(t * b.size for t, b in zip(per_batch, timed, strict=True)) / calls if calls \
        else None
    flags += [f for f in (precision_flag(report, first_error), busy_flag(timed, cal)) if f]
    flags += other_flags(report, ranked, least_s)
    return TimingVerdict(ranked, source, per_batch, events, bracket,
                         wrong_outputs(report, tolerance), tuple(flags), calls)
