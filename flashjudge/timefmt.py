"""Times as people read them, the same on the pages and in the console.

A cuda-kernel's time is a fraction of a millisecond: printed with a fixed three decimals it reads
0.000 s, so times under a second keep three significant digits instead.
"""

from __future__ import annotations

import math


def seconds_text(seconds: float | None) -> str:
    """"11.235", "0.874", "0.000196" (no unit); "" for None."""
    if seconds is None:
        return ""
    if seconds >= 1 or seconds <= 0:
        return f"{seconds:.3f}"
    return f"{seconds:.{2 - math.floor(math.log10(seconds))}f}"
