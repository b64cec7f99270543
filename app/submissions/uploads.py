"""Checks on submitted source files, done before anything is stored (bad input changes nothing).

How many files, how large and how named is the contract's rule (flashjudge/contract/uploads.py),
which the worker holds too; the language's file suffixes, duplicates and UTF-8 are the app's."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.errors import UserError
from flashjudge.contract import LANGUAGES, UploadProblem
from flashjudge.contract.uploads import count_problem, name_problem, size_problem


@dataclass(frozen=True)
class SourceFile:
    """One accepted upload."""

    name: str  # plain file name, no directories
    content: bytes  # the bytes as uploaded (valid UTF-8)


def check_language(language: str) -> str:
    """The queue a language runs on; a clear error naming the choices otherwise."""
    if language not in LANGUAGES:
        choices = ", ".join(sorted(LANGUAGES))
        raise UserError(f"unknown language {language!r}; choose one of {choices}", field="language")
    return str(LANGUAGES[language].queue)


def refuse(problem: UploadProblem | None) -> None:
    """The contract's problem as the user's error (413 for a size), or nothing."""
    if problem is not None:
        raise UserError(problem.message, status=413 if problem.too_large else 422, field="files")


def check_name(name: str, language: str) -> None:
    """Plain names only (no '..', '/', '\\', dot-files) with a suffix the language accepts."""
    refuse(name_problem(name))
    allowed = LANGUAGES[language].suffixes
    if not any(name == a or (a.startswith(".") and name.endswith(a)) for a in allowed):
        raise UserError(
            f"{name}: a {language} submission takes {', '.join(allowed)} files", field="files"
        )


def refuse_blank(f: SourceFile) -> None:
    """An empty or blank file is no attempt (a wrong file picked, a buffer never saved): judged,
    it failed to link, used up the submit interval and counted as late."""
    if not f.content.strip():
        raise UserError(f"{f.name} is empty: choose the file that holds your code", field="files")


def check_sources(language: str, files: list[SourceFile]) -> None:
    """Raise UserError for the first problem: count, names, duplicates, sizes, blank files,
    encoding."""
    check_language(language)
    if not files:
        main = LANGUAGES[language].main_file
        raise UserError(f"files: choose your {main} (or drop it here)", field="files")
    refuse(count_problem(len(files)))
    seen: set[str] = set()
    for f in files:
        check_name(f.name, language)
        if f.name in seen:
            raise UserError(f"{f.name} is attached twice", field="files")
        seen.add(f.name)
        refuse(size_problem(f.name, len(f.content)))
        refuse_blank(f)
        try:
            f.content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(
                f"{f.name} is not UTF-8 text (byte {exc.start}); save it as UTF-8", field="files"
            ) from exc
