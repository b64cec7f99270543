"""Where a wrong answer is wrong: the error map of a WA test's output, shipped in its result.

After a WA the judge scans the output once more against the expected output it already compared
(kernels/errormap.py: bounded memory, ~0.1 s for the largest output) and keeps the small map in
`TestResult.error_map`, which the result page draws next to the test. The map is extra
information: a failure to make it never changes the verdict, it only leaves the map out.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from flashjudge.contract import Verdict
from kernels.errormap import error_map_files
from kernels.fileformat import InputHeader

log = logging.getLogger(__name__)


def wrong_answer_map(verdict: Verdict, outputs: list[tuple[Path | None, Path]],
                     tolerance: float, header: InputHeader) -> dict[str, Any] | None:
    """ErrorMap.to_dict() of the first (output, expected) pair with bad values, for a WA test
    (cuda-kernel gives two pairs: the test's input, then the judge's fresh one); None otherwise."""
    if verdict != Verdict.WA:
        return None
    for output, expected in outputs:
        if output is None:
            continue
        try:
            found = error_map_files(output, expected, header, tolerance)
        except Exception as exc:  # noqa: BLE001 - the verdict stands without its map
            log.warning("no error map for %s: %s", output.name, exc)
            continue
        if found.bad:
            return found.to_dict()
    return None
