"""bench/drawn_rounds.py's table says what the final check can do on a whole hw4 program: whole
rounds at the default 300 GPU s per pair never reach the rule's first look, drawn ones order a
3% slower copy. A table that said otherwise would send the next session after the wrong fix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_drawn_rounds_order_what_whole_rounds_never_reach():
    done = subprocess.run([sys.executable, "bench/drawn_rounds.py", "--noise", "0.03",
                           "--budgets", "300", "--trials", "10"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=True)
    rows = {cells[2]: cells for line in done.stdout.splitlines()
            if (cells := [c.strip() for c in line.strip("|").split("|")])[0] == "3%"}
    # noise, budget, rounds of, same tied %, slower right %, wrong %, GPU s, rounds, same GPU s
    assert rows["whole"][3:6] == ["100.0", "0.0", "0.0"] and int(rows["whole"][7]) < 15
    assert float(rows["drawn"][4]) >= 90 and rows["drawn"][5] == "0.0"
    assert float(rows["drawn"][6]) < 100
    assert float(rows["drawn"][8]) < 0.75 * 300, "a tie holds its pair well under the budget"
