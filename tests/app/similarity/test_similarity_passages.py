"""The side-by-side view: shared passages land on the copied lines in both files."""

from __future__ import annotations

import pytest

from app.similarity.engine import BASE, SUBMISSION, Passage, SimilarityIndex, side_by_side
from tests.app.similarity.variants import (
    TILED_RENAMES,
    function_block,
    line_of,
    rename,
    source,
)


@pytest.fixture()
def pasted_kernel() -> tuple[str, str, SimilarityIndex]:
    """Bob kept his own naive.cu but replaced its kernel with Alice's (renamed)."""
    alice = source("tiled.cu")
    naive = source("naive.cu")
    kernel = rename(function_block(alice, "__global__ void flash_kernel"), TILED_RENAMES)
    bob = naive.replace(function_block(naive, "__global__ void attention_rows"), kernel)
    index = SimilarityIndex()
    index.add("starter", "ta", BASE, source("seq_flashattention.c"))
    index.add("alice-1", "alice", SUBMISSION, alice)
    index.add("bob-1", "bob", SUBMISSION, bob)
    return alice, bob, index


def kernel_lines(text: str, header: str) -> range:
    first = line_of(text, header)
    return range(first, first + function_block(text, header).count("\n"))


def main_passage(passages: list[Passage]) -> Passage:
    return max(passages, key=lambda p: p.fingerprints)


def covers(span_first: int, span_last: int, lines: range, slack: int = 5) -> bool:
    """The span holds at least 90% of the lines and reaches at most `slack` lines past them."""
    inside = len(range(max(span_first, lines.start), min(span_last + 1, lines.stop)))
    return (inside >= 0.9 * len(lines) and span_first >= lines.start - slack
            and span_last < lines.stop + slack)


def test_the_pasted_kernel_is_one_passage_on_the_right_lines_of_both_files(pasted_kernel) -> None:
    alice, bob, index = pasted_kernel
    passages = index.passages("alice-1", "bob-1")
    main = main_passage(passages)
    assert covers(main.a.first, main.a.last, kernel_lines(alice, "__global__ void flash_kernel"))
    assert covers(main.b.first, main.b.last, kernel_lines(bob, "__global__ void fa_forward"))
    assert main.fingerprints >= 0.9 * sum(p.fingerprints for p in passages)


def test_code_that_differs_is_not_highlighted(pasted_kernel) -> None:
    _, bob, index = pasted_kernel
    bob_main = kernel_lines(bob, "int main(")
    for passage in index.passages("alice-1", "bob-1"):
        assert passage.b.last < bob_main.start


def test_side_by_side_tags_the_copied_lines_with_their_passage(pasted_kernel) -> None:
    alice, bob, index = pasted_kernel
    passages = index.passages("alice-1", "bob-1")
    view = side_by_side(alice, bob, passages)
    assert [line.text for line in view.left] == alice.splitlines()
    assert [line.text for line in view.right] == bob.splitlines()
    main = main_passage(passages)
    kernel = kernel_lines(bob, "__global__ void fa_forward")
    tagged = [line.number for line in view.right if line.passage == main.number]
    assert covers(tagged[0], tagged[-1], kernel) and len(tagged) == tagged[-1] - tagged[0] + 1
    bob_main = kernel_lines(bob, "int main(")
    assert all(line.passage is None for line in view.right if line.number >= bob_main.start)
    assert {line.passage for line in view.left} - {None} == {p.number for p in passages}


def test_passages_of_unrelated_files_are_empty() -> None:
    index = SimilarityIndex()
    index.add("alice-1", "alice", SUBMISSION, "int main() { return 0; }\n")
    index.add("bob-1", "bob", SUBMISSION, source("naive.cu"))
    assert index.passages("alice-1", "bob-1") == []
    view = side_by_side("int main() { return 0; }\n", source("naive.cu"), [])
    assert len(view.left) == 1 and view.left[0].passage is None
