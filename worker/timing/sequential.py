"""When a paired comparison may stop: ordered, tied, or not yet.

Each round runs both programs once on every compared test, interleaved test by test, so a
round gives one paired number, d = ln(A's total / B's total). Pairing cancels what both runs of
a round share (the GPU's clocks, a neighbour's load, slow drift) and the log makes a 3% slowdown
the same d whatever the totals. The rounds' d are treated as independent draws around the true
log-ratio; its estimate is their mean, with a Student-t confidence interval.

Why these rules (chosen by replaying the H100 rounds of bench/recorded/ under each candidate,
docs/benchmarks.md "Paired runs for the final standing", and by the seeded synthetic rounds of
tests/worker/timing/test_timing_sequential.py; per-round sd of ln(A/B) about 0.065 on the H100):
- Looks only at a growing schedule (min_rounds, then x1.4: 15, 21, 29, 41, ... , max_rounds),
  not after every round: with K looks, each look uses alpha / K (Bonferroni), so the chance that
  two equally fast programs get ordered at *some* look stays under `alpha` (3%) however the
  comparison ends. Few looks keep alpha / K large enough for a 3% gap to be found in a few dozen
  rounds; looking every round would need alpha / 200.
- No look before 15 rounds (`min_rounds`). At 6 or 8 rounds the 20%-trimmed interval rests on
  4-6 kept rounds and its spread is itself a guess: run times are skewed (slow outliers only),
  so a few rounds that happen to agree give a narrow interval in the wrong place. Every wrong
  order of the old rule's replay (a 3% slower copy put above, 0.2% at 60 and 120 GPU s) came
  from its looks at 6 and 11 rounds; a first look at 11 still left 0.1% with a 0.2% margin.
  15 rounds cost 6 GPU s on a 0.2 s program, well under what a 3% gap needs at this noise
  (~60 rounds).
- Ordered only when the interval clears +-order_margin (0.2%), not merely 0: a difference of a
  few tenths of a percent (two builds' layout, the replayed "same program" pool's own -0.3%) is
  noise-like for grading, and against a zero line the interval narrows onto it at the late
  looks. The margin ties those and, with the first look at 15, keeps the same program tied in
  97-99% at 30-120 s, while a 3% gap is still ordered right in 98.8% at 60 s. A larger margin
  costs that power: 0.5%
  ordered an exact 3% gap at the H100's noise in only 89% of synthetic 60 s pairs (the replay's
  gap is 3.3%, which hid it).
- Measured and not taken: O'Brien-Fleming-like alpha spending (each look the increase of
  2 - 2 Phi(z / sqrt(n / max_rounds))) is strict early as wanted, but its clock is max_rounds
  and the budget ends most comparisons far earlier at a count not known in advance (30 s pairs:
  56% ordered right), while spending the most at the late looks ordered the same program in
  5.4% at 120 s. A MAD scale instead of the Winsorized one narrowed the interval on the skewed
  rounds: the same program ordered in 6.1% at 60 s, and wrong orders stayed (0.2%).
- Tied, early, when the interval lies inside +-margin (1%: a gap no grade should turn on, and
  under the noise of one judging); tied otherwise when the budget or max_rounds is spent, the
  comparison having found no order it could stand behind.
- Tied, early, when no order is in reach (`futility`): at a look, the rounds the budget still
  allows would order the pair with a chance under 2% even if the gap were one standard error
  (`hope`) wider than seen. Equally fast programs used to run to the budget's end, since
  proving a tie inside +-1% takes far more rounds than finding a 3% order: on whole hw4
  programs (the H100's drawn rounds, bench/recorded/rank_check_h100_hw4_drawn_2026-12-06.json,
  replayed) the same program held 118 of 120 GPU s and 143 at 300 s. Stopping them when the
  budget can no longer order them halves that (66 and 79 s) and leaves the 3% gap's power as
  it was (96.3% and 99.2% right). It only ever ties, so it cannot order equally fast programs:
  alpha stays. A chance of 5%, or no extra standard error, cost 0.7-1.2 points of that power.
- One run's noise is at least `floor_sd` (0.2%) so identical-looking rounds claim no false
  certainty; a one-sided slow outlier widens the interval rather than flipping the order.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

ORDERED = "ordered"  # reason: the interval clears +-order_margin
EQUIVALENT = "equivalent"  # reason: the interval lies inside +-margin
BUDGET = "budget"  # reason: the next round did not fit the budget
FUTILE = "futile"  # reason: the rounds the budget still allows could not order them
MAX_ROUNDS = "max-rounds"  # reason: the most rounds were run
A_FASTER, B_FASTER, TIED, OPEN = "a-faster", "b-faster", "tied", "open"


@dataclass(frozen=True)
class RuleConfig:
    """The stopping rule's limits."""

    alpha: float = 0.03  # chance of ordering equally fast programs, over every look (the H100
    # replay of bench/rank_check.py: 0.05 ordered the same program twice in 6.6% at 60 s)
    margin: float = 0.01  # |ln(A/B)| inside which they are tied (1%)
    order_margin: float = 0.002  # an order needs the interval clear of +-this, not only of 0
    min_rounds: int = 15  # the first look
    max_rounds: int = 200  # the last look
    growth: float = 1.4  # each look after this many times the rounds of the one before
    floor_sd: float = 0.002  # the least noise of one round's log-ratio
    trim: float = 0.2  # share of the rounds cut from each end before the mean (Yuen)
    futility: float = 0.02  # tied at a look when an order by the budget's end is less likely
    # than this, granting a gap `hope` standard errors wider than seen (0: never)
    hope: float = 1.0


@dataclass(frozen=True)
class Decision:
    """What the rounds so far say."""

    outcome: str  # A_FASTER, B_FASTER, TIED or OPEN (keep going)
    reason: str  # ORDERED, EQUIVALENT, BUDGET, MAX_ROUNDS, or "" while open
    rounds: int  # rounds behind it
    mean: float  # mean ln(A/B)
    low: float  # the interval's lower end (at the look's level)
    high: float  # its upper end


def looks(config: RuleConfig) -> list[int]:
    """The round counts at which the rule may stop before the budget ends it."""
    found = [config.min_rounds]
    while found[-1] < config.max_rounds:
        found.append(min(config.max_rounds, max(found[-1] + 1,
                                                round(found[-1] * config.growth))))
    return found


def t_quantile(p: float, dof: int) -> float:
    """Student's t quantile (Cornish-Fisher expansion around the normal's, good to ~1% from
    dof 4 on; the standard library has no t distribution)."""
    z = NormalDist().inv_cdf(p)
    v = float(max(dof, 1))
    return (z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
            + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4))


def trimmed(ratios: Sequence[float], trim: float) -> tuple[float, float, int]:
    """(trimmed mean, its standard error, degrees of freedom): Yuen's trimmed mean, `trim` of
    the rounds cut from each end, its error from the Winsorized variance. A round whose run was
    hit by a one-sided slow outlier (I/O, a neighbour) lands in a tail and is cut, where the
    plain mean would take 1/n of it and the plain deviation would swell."""
    n = len(ratios)
    k = int(trim * n)
    ordered = sorted(ratios)
    kept = ordered[k:n - k]
    winsorized = [ordered[k]] * k + kept + [ordered[n - k - 1]] * k
    sd = statistics.stdev(winsorized) if n > 1 else 0.0
    return statistics.fmean(kept), sd / ((1 - 2 * k / n) * math.sqrt(n)), n - 2 * k - 1


def look_level(config: RuleConfig) -> float:
    """Each look's alpha: the looks of the schedule and the one the budget may force."""
    return config.alpha / (len(looks(config)) + 1)


def estimate(ratios: Sequence[float], config: RuleConfig) -> tuple[float, float, int]:
    """(mean, standard error, degrees of freedom) of the log-ratios, the error floored."""
    mean, se, dof = trimmed(ratios, config.trim)
    return mean, max(se, config.floor_sd / math.sqrt(len(ratios))), dof


def chance_of_order(mean: float, se: float, n: int, config: RuleConfig, horizon: int) -> float:
    """The chance that `horizon` rounds in all would end ordered, from n rounds' mean and
    standard error, if the rounds still to come showed a gap `hope` standard errors wider than
    these do (a conditional power, kept hopeful so that a real gap seen small by chance is not
    given up)."""
    if horizon <= n:
        return 0.0
    per_round = se * math.sqrt(n)
    needed = (t_quantile(1 - look_level(config) / 2, horizon - 1) * per_round / math.sqrt(horizon)
              + config.order_margin)
    hoped = abs(mean) + config.hope * se
    final_mean = (n * abs(mean) + (horizon - n) * hoped) / horizon
    final_sd = per_round * math.sqrt(horizon - n) / horizon
    return 1 - NormalDist(final_mean, final_sd).cdf(needed)


def decide(ratios: Sequence[float], config: RuleConfig = RuleConfig(),
           last: bool = False, horizon: int | None = None) -> Decision:
    """The decision after these rounds' ln(A/B); `last`: no further round fits the budget;
    `horizon`: the most rounds the budget allows in all (None: no futility stop)."""
    n = len(ratios)
    if n < config.min_rounds or (n not in looks(config) and not last):
        # under min_rounds no order is claimed: too few rounds to trust the interval's spread
        outcome, reason = (TIED, BUDGET) if last else (OPEN, "")
        return Decision(outcome, reason, n, statistics.fmean(ratios) if ratios else 0.0,
                        -math.inf, math.inf)
    mean, se, dof = estimate(ratios, config)  # the interval at one look's level:
    half = t_quantile(1 - look_level(config) / 2, dof) * se
    low, high = mean - half, mean + half
    if low > config.order_margin:
        return Decision(B_FASTER, ORDERED, n, mean, low, high)
    if high < -config.order_margin:
        return Decision(A_FASTER, ORDERED, n, mean, low, high)
    if -config.margin < low and high < config.margin:
        return Decision(TIED, EQUIVALENT, n, mean, low, high)
    if n >= config.max_rounds or last:
        return Decision(TIED, MAX_ROUNDS if n >= config.max_rounds else BUDGET, n, mean, low,
                        high)
    if horizon is not None and chance_of_order(mean, se, n, config, horizon) < config.futility:
        return Decision(TIED, FUTILE, n, mean, low, high)
    return Decision(OPEN, "", n, mean, low, high)
