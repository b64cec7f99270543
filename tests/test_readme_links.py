"""The README (and the homework contract it points to) link only to files inside this clone: a
fresh clone has no course folder beside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", ["README.md", "docs/homework.md"])
def test_every_link_is_a_file_in_the_repository(doc: str) -> None:
    source = REPO / doc
    targets = [t.split("#", 1)[0] for t in LINK.findall(source.read_text())]
    assert targets, f"{doc} links nothing: the pattern no longer matches"
    outside = [t for t in targets if t and (
        "://" in t or not (source.parent / t).resolve().is_relative_to(REPO)
        or not (source.parent / t).resolve().exists())]
    assert outside == []


def test_the_readme_says_what_a_new_user_needs() -> None:
    text = " ".join((REPO / "README.md").read_text().split())
    for needed in ("make run", "make test", "PORT=", "/custom", "/admin", "users import",
                   "sign-in links", "need a GPU worker", "flashjudge deadline set",
                   "docs/homework.md"):
        assert needed in text, needed
