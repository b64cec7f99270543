"""What a wrong answer's mistake is: the mistake catalogue (kernels/mistakes/) on a WA test's
output, shipped in its result as `TestResult.mistake`, beside the error map it completes.

Like the map, it is extra information: a failure to make it never changes the verdict. It reads
a few batches of the input, the output and the expected output (well under a second of CPU on
the largest tests: bench/mistake_catalogue.py).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from flashjudge.contract import Verdict
from kernels.mistakes.files import mistake_of_files

log = logging.getLogger(__name__)
Checked = tuple[Path | None, Path, Path]  # (the output, its expected output, its input)


def first_batch(error_map: dict[str, Any] | None) -> int | None:
    """The first wrong batch the error map found (saves the catalogue a scan), if it says."""
    first = (error_map or {}).get("first")
    return int(first["batch"]) if isinstance(first, dict) else None


def wrong_answer_mistake(verdict: Verdict, outputs: list[Checked], tolerance: float,
                         error_map: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Mistake.to_dict() of the first output (cuda-kernel: the test's input, then the judge's
    fresh one) that matches a known mistake, for a WA test; None otherwise. The error map (of
    the first wrong output) gives its reading and its first wrong batch."""
    if verdict != Verdict.WA:
        return None
    reading = str((error_map or {}).get("reading", ""))
    for i, (output, expected, input_path) in enumerate(outputs):
        if output is None:
            continue
        try:
            found = mistake_of_files(input_path, output, expected, tolerance, reading,
                                     first_batch(error_map) if i == 0 else None)
        except Exception as exc:  # noqa: BLE001 - the verdict stands without its mistake
            log.warning("no mistake catalogue for %s: %s", output.name, exc)
            continue
        if found is not None:
            return found.to_dict()
    return None
