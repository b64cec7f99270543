"""How deeply a JSON or TOML text nests, checked before a parser recurses into it.

Python's json and tomllib parse nested arrays and tables by recursion: ten thousand "[" make a
RecursionError, which would be a 500. Every client text they are given is checked here first:
brackets and braces are counted outside strings and comments, and a text deeper than the limit
is refused with a message saying so. The parsed value is measured too (TOML's dotted keys nest
tables without a bracket), and a RecursionError the scan did not foresee is the same refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from app.core.errors import UserError

T = TypeVar("T")
OPENERS, CLOSERS = "[{", "]}"


def text_depth(text: str) -> int:
    """The deepest nesting of [ and { outside quoted strings and # comments."""
    deepest = depth = 0
    quote: str | None = None
    escaped = in_comment = False
    for char in text:
        if in_comment:
            in_comment = char != "\n"
        elif quote is not None:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "#":
            in_comment = True
        elif char in OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif char in CLOSERS:
            depth = max(0, depth - 1)
    return deepest


def value_depth(value: Any) -> int:
    """How deeply a parsed value nests lists and dicts (walked without recursion)."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level + 1)
            pending.extend((child, level + 1) for child in item)
    return deepest


def parse_bounded(text: str, parse: Callable[[str], T], what: str, limit: int,
                  field: str) -> T:
    """`parse(text)`, refused (422 naming `field`) when it nests deeper than `limit`."""
    too_deep = UserError(f"{what}: nested deeper than {limit} levels of arrays or tables; a "
                         f"configuration needs far fewer", field=field)
    if text_depth(text) > limit:
        raise too_deep
    try:
        value = parse(text)
    except RecursionError as exc:
        raise too_deep from exc
    if value_depth(value) > limit:
        raise too_deep
    return value
