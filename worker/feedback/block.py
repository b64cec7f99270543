"""The feedback block of a result message: each test's roofline, the cheating flags, the GPU.

One call for the Celery task after judging (`feedback_for`), so the service gets plain JSON it
stores and renders (app/charts/submission.py) without importing the worker. GPU languages only
(the row's `uses_gpu`): a CPU program's times say nothing about a GPU.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flashjudge.contract import LANGUAGES, JudgeResult, LanguageFacts
from testcases.suite import load_suite
from worker.feedback.flagging import flag_results
from worker.feedback.roofline import submission_roofline
from worker.feedback.speed import SpeedOfLight
from worker.machine import Machine


def feedback_for(result: JudgeResult, profile: SpeedOfLight | None,
                 facts: LanguageFacts | None = None) -> dict[str, Any] | None:
    """{"gpu": SpeedOfLight dict without the reference table, "roofline": [TestRoofline dicts],
    "flags": [Flag dicts]}; None for CPU languages and CE. `facts` is the result's language's row
    (default: the contract's row of that name). Without a measured speed of light only the
    trusted timer's holding flags are there (a held time is never ranked silently)."""
    facts = facts or LANGUAGES.get(result.language)
    if facts is None or not facts.uses_gpu or not result.compile.ok:
        return None
    held = timing_flags(result)
    if profile is None:
        return {"gpu": None, "roofline": [], "flags": held} if held else None
    suite = load_suite(result.suite)
    shapes = {t.id: (t.B, t.N, t.d) for t in suite.tests}
    rows = submission_roofline(result.tests, shapes, profile, suite.name, facts)
    flags = flag_results(result.tests, shapes, profile, facts)
    gpu = {k: v for k, v in profile.to_dict().items() if k != "reference_s"}
    return {"gpu": gpu, "roofline": [r.to_dict() for r in rows],
            "flags": [f.to_dict() for f in flags] + held}


def timing_flags(result: JudgeResult) -> list[dict[str, Any]]:
    """The trusted timer's holding flags, in the shape of the speed-of-light flags (the app holds
    a result with any flag until a TA clears it)."""
    return [{"test_id": t.id, "seconds": t.seconds, "floor_s": None, "code": f["code"],
             "reason": f["reason"]}
            for t in result.tests for f in t.timing_flags if f.get("holds")]


def worker_speed(cache_dir: str | Path, suite: str = "hw4",
                 machine: Machine | None = None) -> SpeedOfLight | None:
    """This worker's SpeedOfLight on `machine` (measured on the first call, ~1 min, then read
    from the cache); None on a machine without a GPU or CuPy."""
    try:
        from worker.feedback.speed_of_light import measure_speed_of_light

        return measure_speed_of_light(cache_dir, suite=suite, machine=machine)
    except Exception:  # noqa: BLE001 - no GPU, no CuPy, no driver: no roofline, judging goes on
        return None
