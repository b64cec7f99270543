"""The speed of light against cheating: a time no correct program can reach is flagged.

A kernel's test (a language whose timer times solve() alone: cuda-kernel, triton-kernel) cannot
finish faster than its work allows at the GPU's fastest arithmetic, nor faster than its inputs
can be read and its output written once. A time under MARGIN times that least time means the
timing was forged (the student's code shares the harness's process) or the work was skipped (an
answer cached across calls): the service shows such results to TAs and does not rank them until
a TA clears them. A whole program's time is mostly start-up: it is never flagged.

The arithmetic ceiling is the fastest the GPU does anything a correct answer could be computed
with: tensor cores included (the reference kernel itself uses TF32 tensor cores), so an honest
tensor-core kernel is never flagged; without a tensor measurement the FP32 peak is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flashjudge.contract import LanguageFacts, Timer
from worker.feedback.roofline import least_time, wire_dict, work
from worker.feedback.speed import SpeedOfLight

MARGIN = 0.9  # flag below 0.9x the least time: measurement noise never gets that far


@dataclass(frozen=True)
class Flag:
    """One test whose time is below what the GPU allows."""

    test_id: str  # e.g. "t30"
    seconds: float  # the time that was reported (the fastest of mean and min)
    least_s: float  # the least time the GPU allows for the test
    reason: str  # one line for the TA

    def to_dict(self) -> dict[str, Any]:
        return wire_dict(self)


def _fastest(test: Any) -> float:
    """The smallest time reported for a test: its seconds, or the harness's min when lower."""
    seconds = float(_get(test, "seconds") or 0.0)
    timing = _get(test, "timing")
    if timing:
        low = timing["min_s"] if isinstance(timing, dict) else timing.min_s
        seconds = min(seconds, float(low)) if seconds > 0 else float(low)
    return seconds


def flag_results(tests: list[Any], shapes: dict[str, tuple[int, int, int]],
                 profile: SpeedOfLight, facts: LanguageFacts, margin: float = MARGIN) -> list[Flag]:
    """The flags of a judged submission's tests (TestResults or their dicts); [] when clean.

    Only accepted tests count (a wrong answer is never ranked anyway), only in a language whose
    time is the GPU work alone (its row's timer is the kernel's).
    """
    if facts.timer != Timer.KERNEL:
        return []
    flags = []
    for test in tests:
        test_id = _get(test, "id")
        if str(_get(test, "verdict")) != "AC" or test_id not in shapes:
            continue
        B, N, d = shapes[test_id]
        limit = least_time(work(B, N, d), profile.fastest_flops, profile.bandwidth_bytes_s)
        seconds = _fastest(test)
        if seconds < margin * limit.seconds:
            flags.append(Flag(test_id, seconds, limit.seconds, _reason(seconds, limit.seconds,
                                                                       limit.bound, profile)))
    return flags


def _reason(seconds: float, least_s: float, bound: str, profile: SpeedOfLight) -> str:
    ceiling = (f"{profile.fastest_flops / 1e12:.0f} TFLOP/s" if bound == "compute"
               else f"{profile.bandwidth_gbs:.0f} GB/s")
    return (f"{seconds * 1e3:.4g} ms is below the speed of light of {profile.name} for this test "
            f"({least_s * 1e3:.4g} ms at {ceiling}, {bound}-bound): the timing was forged or "
            "the work skipped")


def _get(test: Any, key: str) -> Any:
    return test.get(key) if isinstance(test, dict) else getattr(test, key, None)
