"""The submitted files: checked before anything is written to disk or built.

File names become paths inside the build directory, so they are held to a plain pattern: no
directories, no dot-files, no `..`. Problems are `SubmissionError`s naming the offending file,
fit to show the student as the build log of a CE.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

MAX_FILES = 16  # a submission is a handful of sources
MAX_FILE_BYTES = 1 << 20  # 1 MiB per source file
MAX_TOTAL_BYTES = 4 << 20  # 4 MiB in all
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}")


class SubmissionError(ValueError):
    """A submission the judge cannot build as given; `field` names the offending file or part."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def check_files(files: Mapping[str, bytes]) -> None:
    """Raise SubmissionError unless every name is plain and the sizes are within bounds."""
    if not files:
        raise SubmissionError("files", "the submission has no files")
    if len(files) > MAX_FILES:
        raise SubmissionError("files", f"{len(files)} files; at most {MAX_FILES} are accepted")
    for name, data in files.items():
        if not _NAME.fullmatch(name) or ".." in name:
            raise SubmissionError(name, f"file name {name!r} is not allowed (a-z 0-9 _.+-)")
        if len(data) > MAX_FILE_BYTES:
            raise SubmissionError(name, f"{name} has {len(data)} bytes; at most {MAX_FILE_BYTES}")
    total = sum(len(d) for d in files.values())
    if total > MAX_TOTAL_BYTES:
        raise SubmissionError("files", f"{total} bytes in all; at most {MAX_TOTAL_BYTES}")


def text_of(data: bytes) -> str:
    """Source bytes as text for inspection (never fails on odd encodings)."""
    return data.decode("utf-8", errors="replace")
