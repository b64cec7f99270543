"""Names for the files TAs download: `<course>-<assignment>-<layout>-<date>.csv`.

Every grade file used to arrive as grades.csv, so a TA exporting hw4 for Canvas and challenge
for Moodle got grades.csv, grades (1).csv, ... and had to open each to know which was which.
The date is the course's day (its time zone) when the file was made.
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo

UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """A file-name-safe piece: letters, digits, '.', '_' and '-' ("CS 101" -> "CS-101")."""
    return UNSAFE.sub("-", text).strip("-.") or "x"


def csv_name(course: str, assignment: str, layout: str, zone: tzinfo,
             now: datetime | None = None) -> str:
    day = (now or datetime.now(zone)).astimezone(zone).strftime("%Y-%m-%d")
    return "-".join(slug(p) for p in (course, assignment, layout)) + f"-{day}.csv"


def attachment(filename: str) -> dict[str, str]:
    """The Content-Disposition header that makes a browser save the body as `filename`."""
    return {"Content-Disposition": f'attachment; filename="{filename}"'}
