"""The start-up floor of a whole-program result: the part of each test's time no kernel can change.

For cuda-program and c-program a test's time is the whole process: start, CUDA context, reading
the input, the attention, writing the output. On small tests most of it (0.2-0.3 s on an H200) is
start-up. The worker measures, per test, what a calibration program that only starts, reads the
input and writes the output takes in the same sandbox (worker/timing/floor.py), and sends it as the
result's `floor` block; the app stores it and shows the time above it, so a student sees what a
change to their kernel did. Ranking is untouched: it uses the whole-program time (the homework's
rule).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

FLOOR_KEY = "floor"  # the JudgeResult.extra block (and the recorded result's key)


@dataclass(frozen=True)
class FloorPoint:
    """The floor of one test: the calibration program's runs on an input of that test's size."""

    seconds: float  # the lower median of the runs' wall times (the refinement's statistic)
    band_s: float  # half-width of its 95% noise band, seconds
    runs: int  # runs behind it

    def to_dict(self) -> dict[str, Any]:
        return {"seconds": round(self.seconds, 6), "band_s": round(self.band_s, 6),
                "runs": self.runs}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FloorPoint:
        return cls(float(data["seconds"]), float(data.get("band_s") or 0.0),
                   int(data.get("runs") or 0))


@dataclass
class StartupFloor:
    """The floors of one judging's tests, or why there are none."""

    tests: dict[str, FloorPoint] = field(default_factory=dict)  # test id -> its floor
    what: str = ""  # what the calibration program does, one line for the page
    error: str | None = None  # the floor could not be measured (then `tests` is empty)

    def total(self, ids: Iterable[str]) -> float | None:
        """The floor of these tests together; None unless every one has a floor."""
        points = [self.tests.get(i) for i in ids]
        if not points or any(p is None for p in points):
            return None
        return sum(p.seconds for p in points if p is not None)

    def to_dict(self) -> dict[str, Any]:
        return {"tests": {i: p.to_dict() for i, p in self.tests.items()}, "what": self.what,
                "error": self.error}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> StartupFloor | None:
        """The block as sent; None for a result without one (cuda-kernel, older workers) or a
        malformed one."""
        if not isinstance(data, Mapping):
            return None
        try:
            tests = {str(i): FloorPoint.from_dict(p) for i, p in (data.get("tests") or {}).items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        error = data.get("error")
        return cls(tests, str(data.get("what") or ""), None if error is None else str(error))


def above_floor(seconds: float | None, floor_s: float | None) -> float | None:
    """A time less its floor (what the program's own work took beyond start-up and I/O); None
    when either is unknown. Not clipped: within the noise a fast test can read slightly below 0."""
    if seconds is None or floor_s is None:
        return None
    return round(seconds - floor_s, 6)
