"""The registry: which language classes a worker knows, looked up by name or inferred from files.

A plain value handed down (JudgeConfig.languages): the worker's own is REGISTRY in
worker/languages/__init__.py; `with_language` gives another one with a class added, so a test can
judge a language of its own without changing the worker's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from flashjudge.contract import LanguageFacts
from worker.languages.base import Language
from worker.running.submission import SubmissionError

NO_LANGUAGE = ("cannot tell the language: expected hw4.cu, a .cu with solve(), a .py with "
               "solve(), or .c/.cpp files")


@dataclass(frozen=True)
class Registry:
    """Language classes, in the order inference asks them (the first that claims files wins)."""

    classes: tuple[type[Language], ...]  # each points at its row (Language.facts)

    def __iter__(self) -> Iterator[type[Language]]:
        return iter(self.classes)

    @property
    def names(self) -> list[str]:
        return [cls.facts.name for cls in self.classes]

    def facts(self, name: str) -> LanguageFacts | None:
        """The row of the language called `name`, or None for a name it does not know."""
        return next((cls.facts for cls in self.classes if cls.facts.name == name), None)

    def get(self, name: str) -> Language:
        """The language called `name`; SubmissionError listing the known ones otherwise."""
        for cls in self.classes:
            if cls.facts.name == name:
                return cls()
        known = ", ".join(self.names)
        raise SubmissionError("language", f"unknown language {name!r} (known: {known})")

    def infer(self, files: Mapping[str, bytes]) -> str:
        """The language these files are written in, from their names and contents."""
        for cls in self.classes:
            if cls.claims(files):
                return cls.facts.name
        raise SubmissionError("language", NO_LANGUAGE)

    def with_language(self, cls: type[Language], first: bool = False) -> Registry:
        """This registry and `cls` (asked first by inference when `first`); this one unchanged."""
        return Registry((cls, *self.classes) if first else (*self.classes, cls))
