"""The submitted files: checked before anything is written to disk or built.

File names become paths inside the build directory; they, the number of files and their sizes
are held to the one rule both sides share (flashjudge/contract/uploads.py), whatever sent the
message. Problems are `SubmissionError`s naming the offending file, fit to show the student as
the build log of a CE.
"""

from __future__ import annotations

from collections.abc import Mapping

from flashjudge.contract import upload_problem


class SubmissionError(ValueError):
    """A submission the judge cannot build as given; `field` names the offending file or part."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def check_files(files: Mapping[str, bytes]) -> None:
    """Raise SubmissionError unless the files keep the contract's upload rule."""
    problem = upload_problem({name: len(data) for name, data in files.items()})
    if problem is not None:
        raise SubmissionError("files" if problem.file is None else problem.file, problem.message)


def text_of(data: bytes) -> str:
    """Source bytes as text for inspection (never fails on odd encodings)."""
    return data.decode("utf-8", errors="replace")
