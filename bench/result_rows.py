"""One line per saved test result (FLASHJUDGE_RESULTS_DIR's JSON files): verdict, figure, timed
calls, their spread, the figure's source and flags. For GPU runs whose result files do not all come
back to the machine that asked for them: the lines do.

    python3 bench/result_rows.py DIR
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def line(name: str, result: dict) -> str:
    timing = result.get("timing") or {}
    flags = ",".join(f["code"] for f in result.get("timing_flags") or []) or "-"
    return (f"{name:<38} {result['verdict']:>3} {timing.get('mean_s', 0) * 1e3:9.4f} ms "
            f"{timing.get('runs', 0):>5} calls std {timing.get('std_s', 0) * 1e6:6.1f} us "
            f"{result.get('timing_source', '-'):>7} {flags} | {result['message'][:100]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="FLASHJUDGE_RESULTS_DIR of the run")
    for path in sorted(parser.parse_args().directory.glob("*.json")):
        doc = json.loads(path.read_text())
        for test in doc.get("tests", []):  # a whole judging (the hostile corpus keeps those)
            print(line(f"{path.stem}-{test['id']}", test))
        result = doc.get("result", doc)  # the CUDA corpus keeps {"result": ..., "timing": ...}
        if "message" in result:  # one test's result (not a judging, not a calibration)
            print(line(path.stem, result))


if __name__ == "__main__":
    main()
