"""Where a whole program's spread comes from: the same program's 30-test passes, recorded by
`bench/neighbour_check.py --suite-totals` (rows with `runs`: one {test: seconds} per pass), split
into what moves a whole pass at once and what each test does on its own.

    python bench/noise_shape.py bench/recorded/suite_totals_h100x2_keeper_2026-11-28.json

Per condition it prints each pass's common mode (the mean over tests of ln(time / the test's
median): the pass as a whole ran that much slower or faster), the per-test noise left after it,
the spread of a total that per-test noise alone would give (independent tests add in quadrature),
and the spread observed. Why it matters: more runs of each test shrink only the per-test part; a
common mode shared by a whole judging (the GPU's clock, the node's state in that minute) stays in
every figure of it, so it sets how far apart two judgings of one file can read.

    python bench/noise_shape.py --rounds bench/recorded/rank_check_h100_hw4_drawn_2026-12-06.json

With --rounds it reads a dump of `bench/rank_check.py` instead: the final check's runs in the
order they ran. Per case it prints one run's noise (ln of its time over its test's and side's
median) and its skew per test and side (the share of them skewed slow), how closely the two runs
of a round move together, the paired ln(A/B) that the check reads, and the noise's memory: half
the mean squared difference of two runs `lag` runs apart (as an sd). Flat over the lags means
independent runs; rising means a node state that drifts across runs, which pairing a round's
two runs back to back takes out and a judging of one program after another keeps.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rank_check import load_dumps

from flashjudge.contract.paired import PairedRound

Pass = Mapping[str, float]


@dataclass(frozen=True)
class Shape:
    """One condition's passes, decomposed."""

    common: list[float]  # per pass: the mean log ratio to the tests' medians
    per_test_sd: float  # sd of the log ratios once each pass's common mode is removed
    independent_spread: float  # the total's sd / mean if only per-test noise were there
    observed_spread: float  # the totals' sd / mean

    @property
    def common_share(self) -> float:
        """The share of the total's variance that per-test noise does not explain."""
        observed, alone = self.observed_spread ** 2, self.independent_spread ** 2
        return max(0.0, observed - alone) / observed if observed else 0.0


def shape(passes: Sequence[Pass]) -> Shape:
    """Decompose two or more passes over the same tests."""
    tests = sorted(passes[0])
    median = {t: statistics.median(p[t] for p in passes) for t in tests}
    common = [statistics.fmean(math.log(p[t] / median[t]) for t in tests) for p in passes]
    residuals = [math.log(p[t] / median[t]) - c
                 for p, c in zip(passes, common, strict=True) for t in tests]
    per_test = statistics.pstdev(residuals)
    whole = sum(median.values())
    alone = math.sqrt(sum((median[t] * per_test) ** 2 for t in tests)) / whole
    totals = [sum(p.values()) for p in passes]
    observed = statistics.stdev(totals) / statistics.fmean(totals)
    return Shape(common, per_test, alone, observed)


LAGS = (1, 2, 3, 4, 10, 40)  # runs apart, for the noise's memory
MIN_RUNS = 6  # runs of one test and side before its skew is counted


@dataclass(frozen=True)
class RoundShape:
    """One case's paired rounds, their runs in the order they ran."""

    runs: int
    per_run_sd: float  # sd of ln(run / its test's and program's median)
    run_skew: float  # mean skew of those, per test and program with MIN_RUNS runs or more
    slow_skewed: float  # share of those tests and programs skewed slow (skew > 0)
    within_corr: float  # correlation of the two runs of a round
    paired_sd: float  # sd of the rounds' ln(A/B) about their test's mean
    paired_skew: float
    memory: dict[int, float]  # lag: sqrt of the semivariance of runs `lag` apart


Trial = tuple[str | None, Sequence[PairedRound]]  # the slowed side ("A", "B" or None), rounds


def skew(values: Sequence[float]) -> float:
    mean, sd = statistics.fmean(values), statistics.pstdev(values)
    return statistics.fmean(((v - mean) / sd) ** 3 for v in values) if sd else 0.0


def program(side: str, slow: str | None) -> str:
    """Which program ran on `side` ("A" or "B"): the slowed copy or the plain one."""
    return "slowed" if side == slow else "plain"


Grouped = dict[tuple[str, str], list[float]]  # (test, program): values


def run_logs(trials: Sequence[Trial]) -> tuple[list[list[float]], Grouped]:
    """Each trial's runs in the order they ran, as ln(seconds / the median of the run's test and
    program), and the same grouped by test and program (a trial's slowed copy may run on either
    side)."""
    seconds: Grouped = {}
    for slow, rounds in trials:
        for r in rounds:
            seconds.setdefault((r.test, program("A", slow)), []).append(r.a_s)
            seconds.setdefault((r.test, program("B", slow)), []).append(r.b_s)
    median = {key: statistics.median(v) for key, v in seconds.items()}
    ordered = []
    for slow, rounds in trials:
        logs: list[float] = []
        for r in rounds:
            a = math.log(r.a_s / median[(r.test, program("A", slow))])
            b = math.log(r.b_s / median[(r.test, program("B", slow))])
            logs += [a, b] if r.a_first else [b, a]
        ordered.append(logs)
    grouped = {key: [math.log(x / median[key]) for x in v] for key, v in seconds.items()}
    return ordered, grouped


def paired_residuals(trials: Sequence[Trial]) -> list[float]:
    """Each round's ln(A/B) less the mean of its test's with the same sides (a slowed copy's
    sleep weighs more on a short test: its ratio is not noise)."""
    groups: Grouped = {}
    for slow, rounds in trials:
        for r in rounds:
            groups.setdefault((r.test, str(slow)), []).append(math.log(r.a_s / r.b_s))
    return [x - statistics.fmean(v) for v in groups.values() if len(v) > 1 for x in v]


def round_shape(trials: Sequence[Trial]) -> RoundShape:
    """Decompose the rounds of several trials of one case."""
    ordered, grouped = run_logs(trials)
    skews = [skew(v) for v in grouped.values() if len(v) >= MIN_RUNS]
    paired = paired_residuals(trials)
    memory = {lag: math.sqrt(statistics.fmean(diffs)) for lag in LAGS
              if (diffs := [(s[i] - s[i + lag]) ** 2 / 2 for s in ordered
                            for i in range(len(s) - lag)])}
    return RoundShape(sum(len(s) for s in ordered),
                      statistics.pstdev([x for s in ordered for x in s]),
                      statistics.fmean(skews) if skews else 0.0,
                      sum(1 for k in skews if k > 0) / len(skews) if skews else 0.0,
                      statistics.correlation([s[i] for s in ordered for i in range(0, len(s), 2)],
                                             [s[i] for s in ordered for i in range(1, len(s), 2)]),
                      statistics.pstdev(paired), skew(paired), memory)


def print_rounds(path: Path) -> None:
    print(f"{'case':<16}{'runs':>6}{'per run':>8}{'skew':>6}{'slow':>6}{'within r':>9}"
          f"{'ln(A/B)':>8}{'skew':>6}  " + " ".join(f"{f'lag {lag}':>6}" for lag in LAGS))
    for tally in load_dumps(str(path)):
        found = round_shape([(slow, result.rounds)
                             for result, slow in zip(tally.results, tally.slow_side, strict=True)])
        print(f"{tally.case:<16}{found.runs:>6}{found.per_run_sd:>8.1%}{found.run_skew:>+6.2f}"
              f"{found.slow_skewed:>6.0%}{found.within_corr:>9.2f}{found.paired_sd:>8.1%}"
              f"{found.paired_skew:>+6.2f}  "
              + " ".join(f"{found.memory[lag]:>6.1%}" if lag in found.memory else f"{'-':>6}"
                         for lag in LAGS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recorded", type=Path,
                        help="a suite-totals JSON of neighbour_check.py (with --rounds: a dump "
                             "of rank_check.py)")
    parser.add_argument("--rounds", action="store_true",
                        help="the recorded file is a rank_check.py dump: the paired runs' shape")
    args = parser.parse_args()
    if args.rounds:
        print_rounds(args.recorded)
        return
    rows = json.loads(args.recorded.read_text())
    print(f"{'condition':<26}{'passes':>7}{'per test':>9}{'tests alone':>12}{'observed':>9}"
          f"{'common share':>13}  common mode per pass")
    for row in rows:
        found = shape(row["runs"])
        print(f"{row['label']:<26}{len(row['runs']):>7}{found.per_test_sd:>9.1%}"
              f"{found.independent_spread:>12.2%}{found.observed_spread:>9.2%}"
              f"{found.common_share:>13.0%}  " + " ".join(f"{c:+.1%}" for c in found.common))


if __name__ == "__main__":
    main()
