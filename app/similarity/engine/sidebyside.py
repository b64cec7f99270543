"""View-model of the side-by-side page: both texts in lines, each tagged with its passage.

No HTML here: the page renders `left` and `right` row by row and colours a line by `passage`
(the same number on both sides is the same shared passage).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.similarity.engine.passages import LineSpan, Passage


@dataclass(frozen=True)
class ViewLine:
    """One source line of one side."""

    number: int  # 1-based line number
    text: str  # the line, without its line ending
    passage: int | None  # number of the shared passage the line is in; None outside any


@dataclass(frozen=True)
class SideBySide:
    """Both documents of a pair, ready to render."""

    left: list[ViewLine]  # document a of the passages, line by line
    right: list[ViewLine]  # document b
    passages: list[Passage]  # the passages, numbered as the lines refer to them


def side_by_side(text_a: str, text_b: str, passages: list[Passage]) -> SideBySide:
    """Tag each line of both texts; where passages overlap a line, the lower number wins."""
    return SideBySide(
        left=_tagged(text_a, [(p.number, p.a) for p in passages]),
        right=_tagged(text_b, [(p.number, p.b) for p in passages]),
        passages=list(passages),
    )


def split_lines(text: str) -> list[str]:
    """Lines as the fingerprints number them: split on "\\n" only, "\\r" endings dropped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _tagged(text: str, spans: list[tuple[int, LineSpan]]) -> list[ViewLine]:
    lines = split_lines(text)
    tags: list[int | None] = [None] * len(lines)
    for number, span in sorted(spans, key=lambda item: item[0]):
        for i in range(span.first - 1, min(span.last, len(lines))):
            if tags[i] is None:
                tags[i] = number
    rows = enumerate(zip(lines, tags, strict=True), start=1)
    return [ViewLine(number, line, tag) for number, (line, tag) in rows]
