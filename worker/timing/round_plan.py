"""Which tests a paired round runs: every compared test, or one test drawn where it tells most.

Why draw at all: a whole hw4 program runs ~10 s per pass of its 30 tests, so a round of every
test for both sides holds the GPU ~21 s. At the default 300 GPU s per pair a comparison then
ended after ~13 rounds, before the stopping rule's first look (15 rounds): tied by the budget
whatever the two programs did. So when fewer than FULL_ROUNDS whole rounds fit the budget, each
round runs one test for both sides, drawn with probability p_t, and many cheap rounds replace a
few dear ones.

What the drawn rounds estimate: the board ranks the total over the tests, so the comparison
must estimate R = sum_t A_t / sum_t B_t, not a mean of per-test ratios (two programs can differ
in opposite directions on different tests). Each round i gives a_i / p_i and b_i / p_i, unbiased
for A's and B's totals (Hansen-Hurwitz); their ratio over the rounds converges to R whatever p
is. `linearized` turns the rounds into one value each, u_i = ln R^ + (a_i - R^ b_i) / (p_i B^),
whose mean is ln R^ and whose spread is the estimate's (the delta method), so the stopping rule
(worker/timing/sequential.py) reads them like whole rounds' ln(A/B), with no trimming: trimming
a mix of tests would cut the tests where the two differ, not outliers.

How p is chosen (Neyman allocation with cost): a test's draw is worth its variance about the
ratio, E[(A_t - R B_t)^2] = (A_t - R B_t)^2 + s^2 (A_t^2 + R^2 B_t^2), per second it holds the
GPU (A_t + B_t), so p_t is proportional to sqrt(E[...] / (A_t + B_t)), from the seconds each
side was judged at (the judging's common factor cancels in R). Tests where the two programs
differ beyond the overall ratio are drawn more, tests that are cheap and alike less. A share
DEFENSIVE of p is spread evenly, so no test goes unseen when the judged figures are off: the
estimate stays right whatever they say, only slower.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flashjudge.contract.paired import PairedRound

FULL_ROUNDS = 60  # whole rounds the budget must fit before every round runs every test
RUN_REL_SD = 0.06  # one run's noise, relative (whole programs on hw4: 5-9% per test, H100)
DEFENSIVE = 0.2  # share of p spread evenly over the tests


@dataclass(frozen=True)
class Plan:
    """Every test each round (`p` empty), or one test per round drawn with probability p."""

    tests: tuple[str, ...]
    p: tuple[float, ...] = ()

    @property
    def drawn(self) -> bool:
        return bool(self.p)

    def pick(self, rng: random.Random) -> tuple[list[str], str, float]:
        """The next round's tests, and as a PairedRound records them: its drawn test ("" for
        every test) and the chance it had (1)."""
        if not self.drawn:
            return list(self.tests), "", 1.0
        i = rng.choices(range(len(self.tests)), weights=self.p)[0]
        return [self.tests[i]], self.tests[i], self.p[i]


def plan(tests: Sequence[str], budget_s: float,
         judged: Mapping[str, tuple[float, float]]) -> Plan:
    """Whole rounds while FULL_ROUNDS of them fit `budget_s` (or no judged seconds say what a
    round costs); else drawn rounds, p from the judged seconds."""
    known = [t for t in tests if t in judged and min(judged[t]) > 0]
    if len(tests) < 2 or len(known) < len(tests):
        return Plan(tuple(tests))
    if FULL_ROUNDS * sum(sum(judged[t]) for t in tests) <= budget_s:
        return Plan(tuple(tests))
    return Plan(tuple(tests), neyman([judged[t] for t in tests]))


def neyman(judged: Sequence[tuple[float, float]]) -> tuple[float, ...]:
    """Each test's chance: its variance about the overall ratio per GPU second, mixed with an
    even share (DEFENSIVE)."""
    ratio = sum(a for a, _ in judged) / sum(b for _, b in judged)
    worth = [math.sqrt(((a - ratio * b) ** 2 + RUN_REL_SD ** 2 * (a * a + (ratio * b) ** 2))
                       / (a + b)) for a, b in judged]
    even = 1 / len(judged)
    return tuple((1 - DEFENSIVE) * w / sum(worth) + DEFENSIVE * even for w in worth)


def linearized(rounds: Sequence[PairedRound]) -> list[float]:
    """Drawn rounds as values whose mean is ln of the ratio of the estimated totals and whose
    spread is that estimate's (module docstring)."""
    a = [r.a_s / r.p for r in rounds]
    b = [r.b_s / r.p for r in rounds]
    mean_b = max(statistics.fmean(b), 1e-12)
    ratio = max(sum(a), 1e-12) / max(sum(b), 1e-12)
    return [math.log(ratio) + (ai - ratio * bi) / mean_b for ai, bi in zip(a, b, strict=True)]
