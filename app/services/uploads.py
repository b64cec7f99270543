"""Checks on submitted source files, done before anything is stored (bad input changes nothing)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.config import Settings
from app.core.errors import UserError
from flashjudge.contract import LANGUAGES

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}")


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


def check_name(name: str, language: str) -> None:
    """Plain names only (no '..', '/', '\\', dot-files) with a suffix the language accepts."""
    if not _NAME.fullmatch(name) or ".." in name:
        raise UserError(
            f"file name {name!r} is not allowed: use a plain name (letters, digits, _ . + -)",
            field="files",
        )
    allowed = LANGUAGES[language].suffixes
    if not any(name == a or (a.startswith(".") and name.endswith(a)) for a in allowed):
        raise UserError(
            f"{name}: a {language} submission takes {', '.join(allowed)} files", field="files"
        )


def check_sources(language: str, files: list[SourceFile], settings: Settings) -> None:
    """Raise UserError for the first problem: count, names, duplicates, sizes, encoding."""
    check_language(language)
    if not files:
        main = LANGUAGES[language].main_file
        raise UserError(f"files: choose your {main} (or drop it here)", field="files")
    if len(files) > settings.max_files:
        raise UserError(f"{len(files)} files; at most {settings.max_files}", field="files")
    seen: set[str] = set()
    for f in files:
        check_name(f.name, language)
        if f.name in seen:
            raise UserError(f"{f.name} is attached twice", field="files")
        seen.add(f.name)
        if len(f.content) > settings.max_source_bytes:
            raise UserError(
                f"{f.name} has {len(f.content)} bytes; at most {settings.max_source_bytes}",
                status=413,
                field="files",
            )
        try:
            f.content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(
                f"{f.name} is not UTF-8 text (byte {exc.start}); save it as UTF-8", field="files"
            ) from exc
