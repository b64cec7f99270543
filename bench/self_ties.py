"""The same file against itself on the board: from refined totals of many judgings of one
program (the worker's "refined times: ... total X s +- Y" log lines, as
bench/gpu_cluster_check.sh keeps them), how often the board's tie rule ties two of them, and how
a copy made 3% slower would be shown, for each judging-wide noise term tried.

    python bench/self_ties.py bench/recorded/refined_totals_h200x2_hw4_2026-11-28.jsonl

The recorded band is the one the worker gave then; each row rebuilds it as worker/timing/stats.py
`total_estimate` would with `judging_rel_sd` = the row's term (the per-test part kept), then
ranks every pair with app/scoreboard/ties.py `place`. A fair board ties the same file with itself
in about 95% of pairs (its bands are 95%); "3% slower ordered wrong" counts pairs where the
slowed copy reads faster and is not tied: what a student would see as a reversal.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
from pathlib import Path

from app.scoreboard.ties import Entry, place
from worker.timing.stats import Estimate, NoiseModel, total_estimate

REFINED = re.compile(r"total ([\d.]+) s \+- ([\d.]+)")
TERMS = (0.0, 0.01, 0.02, 0.03, 0.035, 0.04)
SLOWER = 1.03

Figure = tuple[float, float]  # (total, band at 95%)


def refined_figures(path: Path) -> list[Figure]:
    """(total, band) of every "refined times" line of a JSON-lines log."""
    found = []
    for line in path.read_text().splitlines():
        match = REFINED.search(json.loads(line).get("msg", "")) if line.strip() else None
        if match:
            found.append((float(match[1]), float(match[2])))
    return found


def with_term(figure: Figure, term: float) -> Figure:
    """The band total_estimate gives with this judging-wide term (the recorded one had none):
    the recorded band stands in for the tests' part, one Estimate of se = band / z."""
    total, band = figure
    noise = NoiseModel(judging_rel_sd=term)
    rebuilt = total_estimate([Estimate(total, band / noise.z, 0.0, 0.0, 1, "sum")], noise)
    return rebuilt.statistic, (rebuilt.high - rebuilt.low) / 2


def verdict(fast: Figure, slow: Figure) -> str:
    """"tied", "right" (the slower one ranked below) or "wrong", by the board's rule."""
    rows = sorted([Entry("fast", 100.0, 30, *fast), Entry("slow", 100.0, 30, *slow)],
                  key=lambda e: e.total)
    placed = place(rows)
    if placed[1].tied:
        return "tied"
    return "right" if placed[0].id == "fast" else "wrong"


def shares(figures: list[Figure], term: float) -> tuple[float, float, float]:
    """Same file tied; 3% slower copy tied; 3% slower copy ordered wrong (shares of pairs)."""
    widened = [with_term(f, term) for f in figures]
    same = [verdict(a, b) == "tied" for a, b in itertools.combinations(widened, 2)]
    slowed = [verdict(a, (b[0] * SLOWER, b[1] * SLOWER))
              for a, b in itertools.permutations(widened, 2)]
    return (sum(same) / len(same), slowed.count("tied") / len(slowed),
            slowed.count("wrong") / len(slowed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="JSON lines with the worker's refined-times lines")
    args = parser.parse_args()
    figures = refined_figures(args.log)
    totals = [t for t, _ in figures]
    mean = sum(totals) / len(totals)
    sd = math.sqrt(sum((t - mean) ** 2 for t in totals) / (len(totals) - 1))
    print(f"{len(figures)} judgings of one file: mean total {mean:.3f} s, sd {sd / mean:.2%}")
    print(f"{'judging term':>13}{'band (median)':>15}{'same file tied':>16}"
          f"{'3% slower tied':>16}{'ordered wrong':>15}")
    for term in TERMS:
        bands = sorted(with_term(f, term)[1] / f[0] for f in figures)
        same, tied, wrong = shares(figures, term)
        print(f"{term:>13.1%}{bands[len(bands) // 2]:>15.1%}{same:>16.0%}{tied:>16.0%}"
              f"{wrong:>15.0%}")


if __name__ == "__main__":
    main()
