"""A small course for the similarity tests: real CUDA sources as submissions, fingerprinted by
the control side's own function, judged results recorded as the recorder does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import SimilaritySource, Submission, SubmissionFile
from app.similarity import fingerprinting
from app.similarity.suite_index import suite_index
from app.submissions import recording
from flashjudge.contract import FingerprintPayload
from tests.app.similarity.variants import disguised_tiled, source
from tests.app.utils.factories import Account, judged_result

TILED, NAIVE, STARTER = source("tiled.cu"), source("naive.cu"), source("seq_flashattention.c")
COPY = disguised_tiled()  # tiled.cu renamed, reordered, recommented


@pytest.fixture(autouse=True)
def fresh_index() -> Iterator[None]:
    """Each test's database starts empty; so must the process's indexes of it."""
    suite_index.cache_clear()
    yield
    suite_index.cache_clear()


def submit(db: Session, settings: Settings, account: Account, text: str,
           passed: int | None = None, fingerprint: bool = True) -> int:
    """A stored cuda-program submission (judged with `passed` tests when given)."""
    sub = Submission(user_id=account.id, language="cuda-program", suite=settings.suite,
                     status="queued", attempt=1, compile_log="", error="")
    sub.files = [SubmissionFile(name="hw4.cu", content=text.encode())]
    db.add(sub)
    db.commit()
    if passed is not None:
        recording.record_result(db, settings, sub.id, 1, judged_result(passed, 0.5))
    if fingerprint:
        assert fingerprinting.fingerprint(db, FingerprintPayload(submission_id=sub.id))
    return sub.id


def upload(db: Session, settings: Settings, kind: str, name: str, text: str) -> int:
    """A TA's source, fingerprinted."""
    row = SimilaritySource(suite=settings.suite, kind=kind, name=name, content=text)
    db.add(row)
    db.commit()
    assert fingerprinting.fingerprint(db, FingerprintPayload(source_id=row.id))
    return row.id
