"""A paired comparison of two judged submissions: the message the service sends and
the result a worker sends back.

Two neighbours on the board whose time bands overlap are run interleaved on one GPU, A B then
B A, on the same prepared inputs, round after round, until their order is significant or the
pair's budget of GPU seconds is spent (worker/timing/sequential.py says when). Each side is a
JudgePayload of a recorded attempt, so the worker builds and runs it exactly as it was judged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from flashjudge.contract.messages import JudgePayload

A_FASTER = "a-faster"  # outcome: A's total is significantly lower than B's
B_FASTER = "b-faster"  # outcome: B's total is significantly lower than A's
TIED = "tied"  # outcome: within the margin, or no order found within the budget
FAILED = "failed"  # outcome: our failure, or a run failed: no order is claimed
OUTCOMES = (A_FASTER, B_FASTER, TIED, FAILED)


def finite(value: Any) -> float | None:
    """A finite float, else None: JSON (and PostgreSQL's json) has no infinities."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@dataclass(frozen=True)
class PairedPayload:
    """Task `flashjudge.paired_run`: compare two recorded submissions on the same tests."""

    run_id: int  # the service's paired-run row
    key: str  # random key of this request, echoed back (a result of an older request is stale)
    a: JudgePayload  # side A: the submission as it was judged (its tests: the ones compared)
    b: JudgePayload  # side B: likewise, with the same tests
    budget_s: float  # GPU seconds the comparison may hold, rounds included whole
    margin: float = 0.01  # |ln(A/B)| under which the two count as equally fast (1%)
    alpha: float = 0.03  # the chance of ordering two equally fast programs, over every look
    max_rounds: int = 200  # the most rounds, whatever the budget
    judged: dict[str, tuple[float, float]] = field(default_factory=dict)  # per compared test,
    # A's and B's seconds as judged: where the rounds' tests are drawn (worker/timing/
    # round_plan.py); empty (an older service): every round runs every test

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "key": self.key, "a": self.a.to_dict(),
                "b": self.b.to_dict(), "budget_s": self.budget_s, "margin": self.margin,
                "alpha": self.alpha, "max_rounds": self.max_rounds,
                "judged": {t: list(s) for t, s in self.judged.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PairedPayload:
        judged = {str(t): (float(s[0]), float(s[1]))
                  for t, s in (data.get("judged") or {}).items()}
        return cls(int(data["run_id"]), str(data.get("key", "")),
                   JudgePayload.from_dict(data["a"]), JudgePayload.from_dict(data["b"]),
                   float(data["budget_s"]), float(data.get("margin", 0.01)),
                   float(data.get("alpha", 0.03)), int(data.get("max_rounds", 200)), judged)


@dataclass(frozen=True)
class PairedRound:
    """One round: every compared test run once by each side, the two interleaved test by test;
    or, in a drawn round, one test drawn with probability `p` (worker/timing/round_plan.py)."""

    a_s: float  # A's total seconds over the round's tests
    b_s: float  # B's total seconds
    cost_s: float  # GPU seconds the round held (both sides' runs and the judge's work around)
    a_first: bool  # whether A ran first in each test of this round (rounds alternate)
    test: str = ""  # a drawn round's test ("": the round ran every compared test)
    p: float = 1.0  # the chance that this test was drawn (1: not drawn)

    @property
    def drawn(self) -> bool:
        return bool(self.test)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"a_s": self.a_s, "b_s": self.b_s, "cost_s": self.cost_s,
                               "a_first": self.a_first}
        return {**out, "test": self.test, "p": self.p} if self.drawn else out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PairedRound:
        return cls(float(data["a_s"]), float(data["b_s"]), float(data["cost_s"]),
                   bool(data.get("a_first", True)), str(data.get("test") or ""),
                   float(data.get("p", 1.0)))


@dataclass
class PairedResult:
    """Message `flashjudge.record_paired`: how a paired comparison ended."""

    outcome: str  # one of OUTCOMES
    reason: str  # "ordered", "equivalent", "futile", "budget", "max-rounds", or what failed
    rounds: list[PairedRound] = field(default_factory=list)  # every round, in order
    mean_log_ratio: float = 0.0  # mean of ln(A/B) per round (> 0: A slower)
    low: float | None = None  # the confidence interval of that mean at the last look, lower
    # end (None: too few rounds for one)
    high: float | None = None  # ... upper end
    gpu_s: float = 0.0  # GPU seconds the rounds held (the builds hold none)
    error: str | None = None  # our failure or the failed run, fit to show a TA
    worker: dict[str, Any] = field(default_factory=dict)  # hostname, gpu

    @property
    def settled(self) -> bool:
        """Whether the outcome can order the board (ordered or tied, not failed)."""
        return self.outcome in (A_FASTER, B_FASTER, TIED)

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "reason": self.reason,
                "rounds": [r.to_dict() for r in self.rounds],
                "mean_log_ratio": self.mean_log_ratio, "low": finite(self.low),
                "high": finite(self.high),
                "gpu_s": self.gpu_s, "error": self.error, "worker": self.worker}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PairedResult:
        outcome = str(data.get("outcome", FAILED))
        return cls(outcome if outcome in OUTCOMES else FAILED, str(data.get("reason", "")),
                   [PairedRound.from_dict(r) for r in data.get("rounds") or []],
                   float(data.get("mean_log_ratio") or 0.0), finite(data.get("low")),
                   finite(data.get("high")), float(data.get("gpu_s") or 0.0),
                   data.get("error"), dict(data.get("worker") or {}))
