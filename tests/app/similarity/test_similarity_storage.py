"""Stored fingerprints rebuild the same index (same pairs, same passages) without the sources,
and an index updated piece by piece equals one built from scratch."""

from __future__ import annotations

import random

import pytest

from app.similarity.engine import (
    BASE,
    PUBLIC,
    SUBMISSION,
    FingerprintParams,
    IndexConfig,
    SimilarityError,
    SimilarityIndex,
    from_bytes,
    from_json,
    to_bytes,
    to_json,
)
from tests.app.similarity.variants import TILED_RENAMES, disguised_tiled, rename, source

Doc = tuple[str, str, str, str]  # doc id, owner, kind, text


def course_docs() -> list[Doc]:
    tiled, naive = source("tiled.cu"), source("naive.cu")
    return [
        ("starter", "ta", BASE, source("seq_flashattention.c")),
        ("last-year", "public", PUBLIC, tiled),
        ("alice-1", "alice", SUBMISSION, tiled),
        ("alice-2", "alice", SUBMISSION, rename(tiled, TILED_RENAMES)),
        ("bob-1", "bob", SUBMISSION, disguised_tiled()),
        ("carol-1", "carol", SUBMISSION, naive),
        ("dave-1", "dave", SUBMISSION, rename(naive, {"dot_row": "dp", "best": "mx"})),
        ("erin-1", "erin", SUBMISSION, naive.replace("int threads = 128;", "int threads = 256;")),
    ]


def build(docs: list[Doc], config: IndexConfig | None = None) -> SimilarityIndex:
    index = SimilarityIndex(config)
    for doc in docs:
        index.add(*doc)
    return index


@pytest.mark.parametrize(("dump", "load"), [(to_json, from_json), (to_bytes, from_bytes)],
                         ids=["json", "bytes"])
def test_an_index_rebuilt_from_stored_fingerprints_gives_identical_pairs(dump, load) -> None:
    original = build(course_docs())
    stored = [(doc_id, owner, kind, dump(original.fingerprints(doc_id)))
              for doc_id, owner, kind, _ in course_docs()]
    rebuilt = SimilarityIndex()
    for doc_id, owner, kind, blob in stored:
        rebuilt.add_fingerprints(doc_id, owner, kind, load(blob))
    assert original.top_pairs(100) == rebuilt.top_pairs(100)
    assert len(original.top_pairs(100)) >= 4
    assert original.passages("bob-1", "alice-1") == rebuilt.passages("bob-1", "alice-1")


@pytest.mark.parametrize("common_owners", [1, 2, 30])
def test_adding_removing_in_any_order_equals_building_from_scratch(common_owners: int) -> None:
    """Base code uploaded late, superseded submissions removed, students crossing the common
    threshold both ways: the pairs are those of an index built from what is left."""
    config = IndexConfig(common_owners=common_owners, min_shared=1)
    docs = course_docs()
    extra = [("carol-0", "carol", SUBMISSION, source("tiled.cu")),
             ("frank-1", "frank", SUBMISSION, disguised_tiled())]
    for seed in range(3):
        shuffled = docs + extra
        random.Random(seed).shuffle(shuffled)
        index = build(shuffled, config)
        for doc_id, *_ in extra:
            index.remove(doc_id)
        rest = list(docs)
        random.Random(seed + 10).shuffle(rest)
        assert index.top_pairs(100) == build(rest, config).top_pairs(100)


def test_stored_fingerprints_made_with_other_params_are_refused() -> None:
    fp = build(course_docs()[:1]).fingerprints("starter")
    other = SimilarityIndex(IndexConfig(params=FingerprintParams(k=12, window=4)))
    with pytest.raises(SimilarityError) as error:
        other.add_fingerprints("starter", "ta", BASE, from_json(to_json(fp)))
    assert error.value.field == "fingerprints"


@pytest.mark.parametrize("blob", [b"", b"not fingerprints", b"FJFP\x01" + bytes(11)])
def test_a_corrupt_blob_is_an_error_naming_the_fingerprints(blob: bytes) -> None:
    fp = build(course_docs()[:1]).fingerprints("starter")
    cut = to_bytes(fp)[:-3]
    for data in (blob, cut):
        with pytest.raises(SimilarityError) as error:
            from_bytes(data)
        assert error.value.field == "fingerprints"
    with pytest.raises(SimilarityError):
        from_json('{"format": "something else"}')


def test_bad_documents_are_errors_naming_the_field() -> None:
    index = build(course_docs()[:2])
    for args, field in [(("last-year", "x", SUBMISSION, "int a;"), "doc_id"),
                        (("new", "x", "homework", "int a;"), "kind")]:
        with pytest.raises(SimilarityError) as error:
            index.add(*args)
        assert error.value.field == field
    with pytest.raises(SimilarityError) as error:
        index.passages("last-year", "nobody")
    assert error.value.field == "doc_id"
