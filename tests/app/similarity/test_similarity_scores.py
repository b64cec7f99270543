"""What a TA sees in the pair list: copies on top whatever was disguised, independent work and
shared starter code not flagged, a student's own submissions never paired."""

from __future__ import annotations

import pytest

from app.similarity.engine import BASE, PUBLIC, SUBMISSION, IndexConfig, SimilarityIndex
from tests.app.similarity.variants import (
    TILED_RENAMES,
    disguised_tiled,
    move_function,
    recomment,
    rename,
    source,
)

HIGH = 0.85  # a copy, however disguised, shares at least this share of its fingerprints
LOW = 0.10  # independent solutions of the same task, starter code excluded, share less


def course(*docs: tuple[str, str, str, str], base: bool = True) -> SimilarityIndex:
    """An index as the service builds it: the starter code as base, then the documents."""
    index = SimilarityIndex()
    if base:
        index.add("starter", "ta", BASE, source("seq_flashattention.c"))
    for doc_id, owner, kind, text in docs:
        index.add(doc_id, owner, kind, text)
    return index


def pair_ids(index: SimilarityIndex) -> set[frozenset[str]]:
    return {frozenset((p.a, p.b)) for p in index.top_pairs(100)}


@pytest.mark.parametrize("edit", [
    pytest.param(lambda t: rename(t, TILED_RENAMES), id="renamed-variables"),
    pytest.param(lambda t: move_function(
        move_function(t, "__device__ float warp_sum", "__device__ float warp_max"),
        "void check", "__global__ void flash_kernel"), id="reordered-functions"),
    pytest.param(recomment, id="comments-and-layout"),
    pytest.param(lambda t: disguised_tiled(), id="all-three"),
])
def test_a_disguised_copy_scores_high(edit) -> None:
    original = source("tiled.cu")
    copy = edit(original)
    assert copy != original
    index = course(("alice-1", "alice", SUBMISSION, original), ("bob-1", "bob", SUBMISSION, copy),
                   ("carol-1", "carol", SUBMISSION, source("naive.cu")))
    top = index.top_pairs(1)[0]
    assert {top.a, top.b} == {"alice-1", "bob-1"}
    assert top.score >= HIGH and min(top.a_in_b, top.b_in_a) >= HIGH


def test_independent_solutions_score_low() -> None:
    index = course(("alice-1", "alice", SUBMISSION, source("tiled.cu")),
                   ("bob-1", "bob", SUBMISSION, source("naive.cu")))
    assert index.pair("alice-1", "bob-1").score < LOW
    assert index.top_pairs(10) == []


def test_starter_code_everyone_keeps_does_not_make_independent_solutions_similar() -> None:
    docs = (("alice-1", "alice", SUBMISSION, source("tiled.cu")),
            ("bob-1", "bob", SUBMISSION, source("naive.cu")))
    without_base = course(*docs, base=False)
    with_base = course(*docs)
    # Both kept input() and output() from the starter: without it as base, that is a passage.
    before, after = (ix.pair("alice-1", "bob-1").score for ix in (without_base, with_base))
    assert before > 3 * after
    assert pair_ids(without_base) == {frozenset(("alice-1", "bob-1"))}
    assert pair_ids(with_base) == set()


def test_base_code_uploaded_after_the_submissions_is_excluded_too() -> None:
    index = course(("alice-1", "alice", SUBMISSION, source("tiled.cu")),
                   ("bob-1", "bob", SUBMISSION, source("naive.cu")), base=False)
    assert pair_ids(index) == {frozenset(("alice-1", "bob-1"))}
    index.add("starter", "ta", BASE, source("seq_flashattention.c"))
    assert pair_ids(index) == set()
    index.remove("starter")
    assert pair_ids(index) == {frozenset(("alice-1", "bob-1"))}


def test_a_students_own_submissions_are_never_paired() -> None:
    tiled = source("tiled.cu")
    index = course(("alice-1", "alice", SUBMISSION, tiled),
                   ("alice-2", "alice", SUBMISSION, rename(tiled, TILED_RENAMES)),
                   ("bob-1", "bob", SUBMISSION, source("naive.cu")))
    assert pair_ids(index) == set()
    index.add("carol-1", "carol", SUBMISSION, disguised_tiled())
    assert pair_ids(index) == {frozenset(("alice-1", "carol-1")), frozenset(("alice-2", "carol-1"))}


def test_a_copy_of_a_public_source_is_reported_against_it_with_the_submission_first() -> None:
    index = course(("last-year", "public", PUBLIC, source("tiled.cu")),
                   ("bob-1", "bob", SUBMISSION, disguised_tiled()),
                   ("carol-1", "carol", SUBMISSION, source("naive.cu")))
    [top] = index.top_pairs(10)
    assert (top.a, top.b, top.kind_b) == ("bob-1", "last-year", PUBLIC)
    assert top.score >= HIGH


def test_two_public_sources_are_not_a_pair() -> None:
    index = course(("last-year", "public-2023", PUBLIC, source("tiled.cu")),
                   ("github", "public-web", PUBLIC, disguised_tiled()))
    assert index.top_pairs(10) == []


def test_a_public_solution_copied_by_many_is_reported_for_every_copier() -> None:
    """Between students, a passage more than common_owners of them hold is an idiom and does not
    count; against the public source it still does, so no copier hides in the crowd."""
    index = SimilarityIndex(IndexConfig(common_owners=2))
    index.add("starter", "ta", BASE, source("seq_flashattention.c"))
    index.add("last-year", "public", PUBLIC, source("tiled.cu"))
    copiers = [f"student{i}" for i in range(4)]
    for i, owner in enumerate(copiers):
        index.add(f"{owner}-1", owner, SUBMISSION, rename(disguised_tiled(), {"tx": f"lane{i}"}))
    index.add("honest-1", "honest", SUBMISSION, source("naive.cu"))
    reported = {(p.a, p.b) for p in index.top_pairs(100)}
    assert reported == {(f"{owner}-1", "last-year") for owner in copiers}
    assert all(p.score >= HIGH for p in index.top_pairs(100))
