"""Two workers starting cold on one shared cache: every entry is made once, and both get it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PREPARE = """
import json, sys
from testcases.prepared import prepare_suite
from testcases.suite import load_suite
made = []
def note(event):
    if event.stage == "expected":
        made.append(event.test_id)
prepared = prepare_suite(load_suite("hw4-mini"), sys.argv[1], "cpu", tests=["t01", "t02", "t03"],
                         progress=note)
print(json.dumps({"made": made, "files": {t: str(p.expected_path) for t, p in prepared.items()}}))
"""


def test_two_cold_workers_fill_each_entry_once(tmp_path: Path) -> None:
    workers = [subprocess.Popen([sys.executable, "-c", PREPARE, str(tmp_path)], cwd=REPO,
                                stdout=subprocess.PIPE, text=True) for _ in range(2)]
    reports = [json.loads(w.communicate(timeout=300)[0]) for w in workers]
    assert all(w.returncode == 0 for w in workers)
    made = sorted(t for r in reports for t in r["made"])
    assert made == ["t01", "t02", "t03"]  # each expected output computed by one worker only
    assert reports[0]["files"] == reports[1]["files"]
    assert all(Path(p).is_file() for p in reports[0]["files"].values())
