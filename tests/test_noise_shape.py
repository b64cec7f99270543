"""bench/noise_shape.py tells a spread that moves whole passes from one made by each test alone:
the first needs a reference in the same judging, the second only more runs, so a wrong split
would send the next GPU session after the wrong fix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
