"""bench/noise_shape.py tells a spread that moves whole passes from one made by each test alone:
the first needs a reference in the same judging, the second only more runs, so a wrong split
would send the next GPU session after the wrong fix."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import noise_shape

from flashjudge.contract.paired import TIED, PairedResult, PairedRound

REPO = Path(__file__).resolve().parents[1]
BASE = {f"t{i:02d}": 0.2 + 0.01 * i for i in range(1, 31)}


def columns(rows: list[dict], tmp_path: Path) -> dict[str, list[str]]:
    recorded = tmp_path / "suite_totals.json"
    recorded.write_text(json.dumps(rows))
    done = subprocess.run([sys.executable, "bench/noise_shape.py", str(recorded)], cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=True)
    lines = done.stdout.splitlines()[1:]
    return {line.split()[0]: line.split()[1:] for line in lines}


def test_passes_that_move_together_are_all_common_mode(tmp_path: Path) -> None:
    passes = [{t: s * factor for t, s in BASE.items()} for factor in (0.97, 1.0, 1.03)]
    found = columns([{"label": "drift", "runs": passes}], tmp_path)["drift"]
    passes_n, per_test, alone, observed, share, *common = found
    assert (passes_n, per_test, alone, share) == ("3", "0.0%", "0.00%", "100%")
    assert observed == "3.00%" and common == ["-3.0%", "+0.0%", "+3.0%"]


def test_noise_that_cancels_within_a_pass_is_per_test(tmp_path: Path) -> None:
    up_down = [{t: s * (1.05 if (i + k) % 2 else 1 / 1.05) for i, (t, s) in enumerate(BASE.items())}
               for k in range(4)]
    found = columns([{"label": "jitter", "runs": up_down}], tmp_path)["jitter"]
    per_test, share = found[1], found[4]
    assert per_test == "4.9%" and share == "0%"


def drawn_trials(drift_sd: float, run_sd: float, slow: str | None = None,
                 seed: int = 1) -> list[tuple[str | None, list[PairedRound]]]:
    """Four trials of 120 drawn rounds: each run is its test's seconds times a node state that
    walks from run to run (drift_sd a step, pulled back to 0) and noise of its own (run_sd); the
    slowed copy on `slow` (alternating sides by trial) sleeps 20 ms, a lot on a 50 ms test."""
    rng = random.Random(seed)
    tests = {"t01": 0.05, "t02": 0.5, "t03": 1.0}
    trials = []
    for trial in range(4):
        side = None if slow is None else ("B" if trial % 2 == 0 else "A")
        state, rounds = 0.0, []
        for i in range(120):
            test = rng.choice(sorted(tests))
            times = []
            for _ in range(2):
                state = 0.9 * state + rng.gauss(0, drift_sd)
                times.append(tests[test] * math.exp(state + rng.gauss(0, run_sd)))
            first_a = i % 2 == 0
            a_s, b_s = times if first_a else times[::-1]
            a_s += 0.02 if side == "A" else 0.0
            b_s += 0.02 if side == "B" else 0.0
            rounds.append(PairedRound(a_s, b_s, a_s + b_s, first_a, test, 1 / 3))
        trials.append((side, rounds))
    return trials


def test_runs_that_share_a_drifting_node_state_move_together_and_remember_it() -> None:
    drifting = noise_shape.round_shape(drawn_trials(drift_sd=0.03, run_sd=0.01))
    assert drifting.within_corr > 0.8  # a round's two runs share the state: pairing cancels it
    assert drifting.memory[40] > 1.5 * drifting.memory[1]  # far runs differ more than neighbours
    assert drifting.paired_sd < drifting.per_run_sd / 2


def test_independent_runs_have_no_memory_and_nothing_for_pairing_to_cancel() -> None:
    alone = noise_shape.round_shape(drawn_trials(drift_sd=0.0, run_sd=0.05))
    assert abs(alone.within_corr) < 0.15
    assert abs(alone.memory[40] / alone.memory[1] - 1) < 0.15
    assert abs(alone.per_run_sd - 0.05) < 0.005  # ln(run / median): the noise itself
    assert abs(alone.paired_sd - 0.05 * math.sqrt(2)) < 0.01


def test_a_slowed_copys_sleep_is_not_counted_as_noise_on_either_side() -> None:
    """The slowed copy runs on B in even trials and on A in odd ones: each run is measured
    against its own program's median, so the sleep (40% of the short test) is no noise."""
    slowed = noise_shape.round_shape(drawn_trials(drift_sd=0.0, run_sd=0.05, slow="B"))
    assert abs(slowed.per_run_sd - 0.05) < 0.01
    assert slowed.paired_sd < 0.1


def test_the_rounds_table_reads_a_rank_check_dump(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import rank_check
    finally:
        sys.path.remove(str(REPO / "bench"))
    tallies = []
    for case, slow in (("same program", None), ("3% slower", "B")):
        tally = rank_check.Tally(case)
        for side, rounds in drawn_trials(0.02, 0.03, slow):
            tally.add(PairedResult(TIED, "budget", rounds, gpu_s=1.0), side)
        tallies.append(tally)
    dump = tmp_path / "rounds.json"
    rank_check.dump(str(dump), tallies, "cpu")
    done = subprocess.run([sys.executable, "bench/noise_shape.py", "--rounds", str(dump)],
                          cwd=REPO, capture_output=True, text=True, timeout=60, check=True)
    header, *rows = done.stdout.splitlines()
    assert header.split()[:3] == ["case", "runs", "per"] and "lag 40" in header
    assert [row.split()[0:3] for row in rows] == [["same", "program", "960"],
                                                    ["3%", "slower", "960"]]
