"""One upload rule, two sides: whatever the app refuses for its count, size or names, the worker
refuses too, and the other way round (the rule lives in flashjudge/contract/uploads.py)."""

from __future__ import annotations

import pytest

from app.core.errors import UserError
from app.submissions.uploads import SourceFile, check_sources
from flashjudge.contract import MAX_FILE_BYTES, MAX_FILES, upload_problem
from worker.running.submission import SubmissionError, check_files

CASES = {
    "one small file": {"hw4.c": 10},
    "at the size limit": {"hw4.c": MAX_FILE_BYTES},
    "one byte over": {"hw4.c": MAX_FILE_BYTES + 1},
    "at the count limit": {f"p{i}.c": 10 for i in range(MAX_FILES)},
    "one file too many": {f"p{i}.c": 10 for i in range(MAX_FILES + 1)},
    "no files": {},
    "a directory": {"src/hw4.c": 10},
    "a dot-file": {".hw4.c": 10},
    "dot-dot": {"a..c": 10},
    "a long name": {"a" * 70 + ".c": 10},
}


def app_refuses(sizes: dict[str, int]) -> bool:
    try:
        check_sources("c-program", [SourceFile(n, b"x" * s) for n, s in sizes.items()])
    except UserError:
        return True
    return False


def worker_refuses(sizes: dict[str, int]) -> bool:
    try:
        check_files({n: b"x" * s for n, s in sizes.items()})
    except SubmissionError:
        return True
    return False


@pytest.mark.parametrize("case", sorted(CASES))
def test_both_sides_agree_with_the_rule(case: str) -> None:
    sizes = CASES[case]
    refused = upload_problem(sizes) is not None
    assert app_refuses(sizes) == worker_refuses(sizes) == refused
