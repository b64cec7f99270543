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
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recorded", type=Path, help="a suite-totals JSON of neighbour_check.py")
    args = parser.parse_args()
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
