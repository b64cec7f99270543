"""Times as people read them, the same on the pages and in the console.

Moments carry their zone's offset ("2026-12-01 23:59 UTC+08:00"): a course's deadline is read in
the course's time zone (FLASHJUDGE_COURSE_TIMEZONE), never guessed.

A cuda-kernel's time is a fraction of a millisecond: printed with a fixed three decimals it reads
0.000 s, so times under a second keep three significant digits instead.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, tzinfo


def seconds_text(seconds: float | None) -> str:
    """"11.235", "0.874", "0.000196" (no unit); "" for None."""
    if seconds is None:
        return ""
    if seconds >= 1 or seconds <= 0:
        return f"{seconds:.3f}"
    return f"{seconds:.{2 - math.floor(math.log10(seconds))}f}"


def offset_text(moment: datetime) -> str:
    """"UTC+08:00", "UTC-05:00", "UTC" for an aware moment's offset."""
    offset = moment.utcoffset()
    if not offset:
        return "UTC"
    minutes = round(offset.total_seconds() / 60)
    sign = "+" if minutes > 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def moment_text(moment: datetime, zone: tzinfo = UTC, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """"2026-12-01 23:59 UTC+08:00": `moment` (aware, or naive UTC as the database keeps it)
    in `zone`, with the offset it has there on that day."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    local = aware.astimezone(zone)
    return f"{local.strftime(fmt)} {offset_text(local)}"
