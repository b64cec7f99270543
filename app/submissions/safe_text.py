"""Text fit for any database: what workers report is stored whatever bytes a submission printed.

PostgreSQL refuses NUL in text ("text fields cannot contain NUL") and in JSON, and psycopg
refuses strings that are not valid Unicode (lone surrogates, which json.loads makes from escaped
invalid UTF-8); JSON columns also refuse NaN and infinities. A build log with one NUL byte once
made a result unstorable: three full judgings, then SE. Everything recorded passes through here.
"""

from __future__ import annotations

import math
from typing import Any

REPLACEMENT = "\ufffd"  # U+FFFD REPLACEMENT CHARACTER, shown where a byte could not be kept


def clean_text(value: str) -> str:
    """`value` with NUL and anything that is not valid Unicode replaced by U+FFFD."""
    if "\x00" in value:
        value = value.replace("\x00", REPLACEMENT)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        value = "".join(REPLACEMENT if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    return value


def clean_json(value: Any) -> Any:
    """A JSON-like value with every string (keys too) cleaned, tuples as lists and non-finite
    floats as the strings "nan", "inf", "-inf" (JSON has no such numbers)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return clean_text(str(value))

