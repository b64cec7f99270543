"""Small view helpers for the templates: verdict colours, "12 s ago", the time-vs-limit chart."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

_URL = re.compile(r"https?://[^\s<>\"']+[^\s<>\"'.,;:!?)\]]")

VERDICT_CLASS = {"AC": "ac", "WA": "wa", "TLE": "tle", "RE": "re", "MLE": "re", "OLE": "re",
                 "NO": "wa", "BK": "wa", "CE": "ce", "SE": "se", "CANCELLED": "cancelled",
                 "SUPERSEDED": "cancelled"}


def verdict_class(verdict: str | None) -> str:
    return VERDICT_CLASS.get(verdict or "", "pending")


def ago(seconds: float | None) -> str:
    """How long ago, in the largest unit that fits: "12 s ago", "5 min ago", "3 h ago"."""
    if seconds is None:
        return ""
    s = max(0, int(seconds))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if s >= size:
            return f"{s // size} {unit} ago"
    return f"{s} s ago"


@dataclass
class Bar:
    """One bar of the time-vs-limit chart (SVG coordinates)."""

    test_id: str  # label
    y: int  # top of the bar
    width: float  # bar length, proportional to seconds / limit
    limit_x: float  # where the limit line sits
    label: str  # "0.42 s / 10 s"
    css: str  # verdict colour class


def bars(tests: list[dict[str, Any]], width: int = 480, row: int = 18) -> list[Bar]:
    """Scale every test's time against the largest limit so limits line up visually. No bars
    when no test ran (a compile error): an all-zero chart says nothing."""
    if not any(t.get("seconds") for t in tests):
        return []
    scale = max([t.get("time_limit") or t.get("seconds") or 1.0 for t in tests] + [1e-9])
    out = []
    for i, t in enumerate(tests):
        seconds = t.get("seconds") or 0.0
        limit = t.get("time_limit") or 0.0
        out.append(Bar(t["id"], i * row, width * min(seconds, scale) / scale,
                       width * limit / scale, f"{seconds:.2f} s / {limit:g} s",
                       verdict_class(t.get("verdict"))))
    return out


def plain_text(text: str) -> Markup:
    """An announcement's body: plain text, escaped, its http(s) links made links (the one
    markup a TA gets: nothing they type can run or restyle a student's page)."""
    out, at = [], 0
    for found in _URL.finditer(text):
        url = found.group()
        out += [str(escape(text[at:found.start()])),
                f'<a href="{escape(url)}" rel="noopener noreferrer nofollow">{escape(url)}</a>']
        at = found.end()
    out.append(str(escape(text[at:])))
    return Markup("".join(out))
