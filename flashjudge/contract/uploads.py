"""What a submission's files may be: one rule, checked by the app when they are uploaded and by
the worker again before it writes any of them to disk (a judge message is not trusted blindly).

File names become paths inside the build directory, so they are held to a plain pattern: no
directories, no dot-files, no `..`. The limits are the app's (8 files of 256 KiB: a submission is
a handful of sources); the worker used to accept 16 of 1 MiB, which nothing could ever send it.
Problems come back as values whose message is fit to show the student.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

MAX_FILES = 8  # source files per submission
MAX_FILE_BYTES = 256 * 1024  # bytes per source file
FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}")  # plain names, no dot-files


@dataclass(frozen=True)
class UploadProblem:
    """Why a submission's files break the rule."""

    file: str | None  # the offending file's name (None: the files as a whole)
    message: str  # fit to show the student
    too_large: bool = False  # a size limit was passed (the app answers 413)


def count_problem(count: int) -> UploadProblem | None:
    """No files, or more than MAX_FILES."""
    if count == 0:
        return UploadProblem(None, "attach at least one source file")
    if count > MAX_FILES:
        return UploadProblem(None, f"{count} files; at most {MAX_FILES}")
    return None


def name_problem(name: str) -> UploadProblem | None:
    """A name that could leave the build directory, hide, or is not plain."""
    if FILE_NAME.fullmatch(name) and ".." not in name:
        return None
    return UploadProblem(name, f"file name {name!r} is not allowed: use a plain name "
                               "(letters, digits, _ . + -)")


def size_problem(name: str, size: int) -> UploadProblem | None:
    """A file over MAX_FILE_BYTES."""
    if size <= MAX_FILE_BYTES:
        return None
    return UploadProblem(name, f"{name} has {size} bytes; at most {MAX_FILE_BYTES}",
                         too_large=True)


def upload_problem(sizes: Mapping[str, int]) -> UploadProblem | None:
    """The first way files (name -> size in bytes) break the rule, or None: the count first,
    then each file's name and size in order."""
    problem = count_problem(len(sizes))
    for name, size in sizes.items():
        problem = problem or name_problem(name) or size_problem(name, size)
    return problem
