"""The worker holds the same upload rule as the app (flashjudge/contract/uploads.py) before it
writes a file: a judge message over it is refused as a CE-style error naming the file."""

from __future__ import annotations

import pytest

from flashjudge.contract import MAX_FILE_BYTES, MAX_FILES
from worker.running.submission import SubmissionError, check_files

SOURCE = b"int main(void) { return 0; }\n"


def test_a_file_over_the_rule_is_refused_naming_it() -> None:
    with pytest.raises(SubmissionError) as caught:
        check_files({"hw4.c": b"x" * (MAX_FILE_BYTES + 1)})
    assert caught.value.field == "hw4.c"
    assert str(caught.value) == f"hw4.c has {MAX_FILE_BYTES + 1} bytes; at most {MAX_FILE_BYTES}"


def test_more_files_than_the_rule_are_refused() -> None:
    with pytest.raises(SubmissionError) as caught:
        check_files({f"part{i}.c": SOURCE for i in range(MAX_FILES + 1)})
    assert (caught.value.field, str(caught.value)) == (
        "files", f"{MAX_FILES + 1} files; at most {MAX_FILES}")


def test_files_within_the_rule_pass() -> None:
    check_files({f"part{i}.c": b"x" * MAX_FILE_BYTES for i in range(MAX_FILES)})
