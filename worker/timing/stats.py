"""One robust time per test from repeated runs, its noise band, and the total's band.

The statistic is the lower median of the runs (the middle run; with an even count the lower of
the two middle ones). Why: the noise measured on the H100 is a few percent of symmetric jitter plus
rare, one-sided slow outliers (I/O, clocks, a neighbour): t22 ran 1.69, 1.29, 1.24 s. The mean
takes a third of such an outlier; the median of three ignores it. The minimum ignores it too but
drifts down as runs are added (about 0.85 sigma lower at 3 runs than at 1), which would reward
whichever submission got more runs; the median does not drift (0 at odd counts; the lower median
of two is the faster run, robust to one slow outlier, about 0.56 sigma low).

The noise of one run (sigma) is estimated from the median absolute deviation, which one outlier
cannot inflate: 1.4826 * MAD, times a small-sample factor (MAD_FACTOR) that makes it unbiased for
normal noise. With fewer than 3 runs MAD says little, so sigma is at least the prior (the relative
noise measured before: 3%). The statistic's standard error is 1.2533 * sigma / sqrt(n) (the
median's large-sample efficiency for normal noise; a little wide at small n, which errs safe). The
band is the statistic +- z standard errors. A distribution-free interval of the median (order
statistics) was not used: with 3 runs it is [min, max] at only 75% coverage, too wide to stop on.

The total's standard error has two parts. The tests' own noise is independent from test to test,
so it adds in quadrature. But a whole judging also moves as one: the same file judged 24 times
through the deployment on 2x H200 (2026-11-28) gave refined totals 3.2-3.8% apart (sd), while each
judging's per-test band claimed 1-3% at 95%; bench/noise_shape.py finds the same on H100 passes
(58-82% of a total's variance shared by all its tests). More runs inside a judging cannot shrink
that part, so it enters the total as its own term, `judging_rel_sd` of the total. Without it the
same file tied with itself in 38% of pairs of those judgings; with 3.5%, in 93% (the rule of
app/scoreboard/ties.py). Closer programs are ordered by paired runs at the freeze, which cancel it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flashjudge.contract import LanguageFacts, Noise

MAD_TO_SIGMA = 1.4826  # sigma = 1.4826 * MAD for normal noise (large samples)
MEDIAN_SE = 1.2533  # SE of the median = 1.2533 * sigma / sqrt(n) (normal noise, large n)
# E[1.4826 * MAD] falls short of sigma for few samples; this factor corrects it (normal noise,
# measured by simulation: 400,000 draws per n). For n >= 10: n / (n - 0.8).
MAD_FACTOR = {2: 1.196, 3: 1.487, 4: 1.360, 5: 1.214, 6: 1.191, 7: 1.138, 8: 1.128, 9: 1.102}
MIN_MEASURED = 3  # from this many runs sigma is measured from the runs, not taken from the prior


@dataclass(frozen=True)
class NoiseModel:
    """What is assumed about the noise where the runs cannot tell."""

    prior_rel_sd: float = 0.03  # one run's relative noise before it is measured (H100: 2.3-3.7%)
    floor_rel_sd: float = 0.002  # the least relative noise claimed, however alike the runs are
    floor_abs_sd: float = 0.001  # the least noise in seconds (timer, process start)
    z: float = 1.96  # the band's half-width in standard errors (95% for normal noise)
    # what moves every test of one judging together, as a share of the total (module docstring):
    # whole programs 3.5% (H200 deployment, 24 judgings); kernels' timers not yet measured: 0
    judging_rel_sd: float = 0.035


# a kernel's timer (cuda-kernel, triton-kernel): a test's "run" is already the mean of many timed
# calls, measured to microseconds by CUDA events or the trusted timer, so a millisecond floor
# would swamp it (a 0.1 ms test read +-2500%). Its prior is the spread between whole judgings
# measured on an H100 (2026-11-24) for cuda-kernel: at most 1.4% per test above 0.2 ms, 3.4% on
# the 0.1 ms t01.
KERNEL_NOISE = NoiseModel(prior_rel_sd=0.02, floor_rel_sd=0.002, floor_abs_sd=2e-6,
                          judging_rel_sd=0.0)
NOISE_MODELS = {Noise.PROGRAM: NoiseModel(), Noise.KERNEL: KERNEL_NOISE}


def noise_for(facts: LanguageFacts | None) -> NoiseModel:
    """The noise assumed for one run of a test in the language of this row (its `noise`; a
    language not known: the whole program's)."""
    return NOISE_MODELS[facts.noise] if facts is not None else NoiseModel()


@dataclass(frozen=True)
class Estimate:
    """A time with its noise band: one test's statistic, or the total of a judging."""

    statistic: float  # seconds: the lower median of the runs (the total: the sum of the tests')
    se: float  # standard error of the statistic, seconds
    low: float  # the band's lower end: statistic - z * se, not below 0
    high: float  # the band's upper end: statistic + z * se
    n: int  # runs behind it (the total: all runs of all tests)
    method: str  # "measured" (sigma from >= 3 runs), "prior" (sigma assumed), "sum" (the total)

    @property
    def rse(self) -> float:
        """Relative standard error: se / statistic (0 for a zero time)."""
        return self.se / self.statistic if self.statistic > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "se": self.se, "low": self.low, "high": self.high,
                "n": self.n, "method": self.method, "rse": self.rse}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Estimate:
        return cls(float(data["statistic"]), float(data["se"]), float(data["low"]),
                   float(data["high"]), int(data["n"]), str(data["method"]))


def lower_median(times: Sequence[float]) -> float:
    """The middle run; with an even count the lower of the two middle ones."""
    if not times:
        raise ValueError("times: at least one run is needed")
    return sorted(times)[(len(times) - 1) // 2]


def mad_sigma(times: Sequence[float]) -> float:
    """One run's noise from the median absolute deviation, unbiased for normal noise (0 for one
    run)."""
    n = len(times)
    if n < 2:
        return 0.0
    center = statistics.median(times)
    mad = statistics.median(abs(t - center) for t in times)
    return MAD_TO_SIGMA * MAD_FACTOR.get(n, n / (n - 0.8)) * mad


def run_sigma(times: Sequence[float], noise: NoiseModel = NoiseModel()) -> float:
    """One run's noise in seconds: measured where there are enough runs, never below the floors,
    never below the prior where there are too few runs to measure it."""
    value = lower_median(times)
    sigma = max(mad_sigma(times), noise.floor_rel_sd * value, noise.floor_abs_sd)
    if len(times) < MIN_MEASURED:
        sigma = max(sigma, noise.prior_rel_sd * value)
    return sigma


def _band(statistic: float, se: float, n: int, method: str, z: float) -> Estimate:
    return Estimate(statistic, se, max(0.0, statistic - z * se), statistic + z * se, n, method)


def estimate(times: Sequence[float], noise: NoiseModel = NoiseModel()) -> Estimate:
    """One test's statistic and band from its runs' times (seconds)."""
    n = len(times)
    factor = 1.0 if n == 1 else MEDIAN_SE  # one run: its own noise
    se = factor * run_sigma(times, noise) / math.sqrt(n)
    method = "measured" if n >= MIN_MEASURED else "prior"
    return _band(lower_median(times), se, n, method, noise.z)


def total_estimate(parts: Sequence[Estimate], noise: NoiseModel = NoiseModel()) -> Estimate:
    """The total of a judging's tests: the sum of the statistics; its SE the root of the sum of
    the tests' squares and the judging's own term (noise.judging_rel_sd of the sum)."""
    statistic = sum(p.statistic for p in parts)
    shared = noise.judging_rel_sd * statistic
    se = math.sqrt(sum(p.se**2 for p in parts) + shared**2)
    return _band(statistic, se, sum(p.n for p in parts), "sum", noise.z)
