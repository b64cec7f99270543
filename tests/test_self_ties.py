"""bench/self_ties.py replays recorded judgings under the board's real rule; its rebuilt bands
must be the worker's own (worker/timing/stats.py total_estimate), or its table would argue for a
noise term the service does not apply."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from self_ties import refined_figures, shares, verdict, with_term

from worker.timing.stats import Estimate, NoiseModel, total_estimate


def test_a_rebuilt_band_is_the_one_the_worker_gives() -> None:
    parts = [Estimate(2.0, 0.05, 0.0, 0.0, 3, "measured"), Estimate(3.0, 0.12, 0.0, 0.0, 3, "x")]
    bare = total_estimate(parts, NoiseModel(judging_rel_sd=0.0))
    worker = total_estimate(parts, NoiseModel(judging_rel_sd=0.035))
    total, band = with_term((bare.statistic, (bare.high - bare.low) / 2), 0.035)
    assert total == worker.statistic and band == pytest.approx((worker.high - worker.low) / 2)


def test_judgings_of_one_file_read_from_the_log_and_ranked(tmp_path: Path) -> None:
    lines = [{"msg": "refined times: 8 more runs, total 10.0000 s +- 0.1000"},
             {"msg": "something else"},
             {"msg": "refined times: 7 more runs, total 10.5000 s +- 0.1000"}]
    log = tmp_path / "node.jsonl"
    log.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    figures = refined_figures(log)
    assert figures == [(10.0, 0.1), (10.5, 0.1)]
    assert verdict(*figures) == "right"  # 0.5 s apart, bands 0.14 s together: ordered
    assert shares(figures, 0.0)[0] == 0.0
    assert shares(figures, 0.035)[0] == 1.0  # +-0.70 s each with the judging's 3.5%: tied
    assert with_term(figures[0], 0.035)[1] == pytest.approx(1.96 * math.hypot(0.1 / 1.96, 0.35))
