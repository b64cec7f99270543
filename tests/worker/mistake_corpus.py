"""The mistake corpus as data (tests/hostile/mistakes/): one submission per mistake and
language, written by make_corpus.py, each with an expected.toml: language, verdicts (any of
these is right), tests (hw4-mini ids), gpu, and mistake: the catalogue's variant name without
its tile ("" for the correct and the garbage programs, which must be named nothing)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "hostile" / "mistakes"


@dataclass(frozen=True)
class MistakeCase:
    """One program of the corpus and what judging it must show."""

    name: str  # directory name, e.g. "c-no-scale"
    files: dict[str, bytes]  # the submission
    language: str  # its language
    verdicts: tuple[str, ...]  # acceptable verdicts for every test
    tests: tuple[str, ...]  # hw4-mini tests to judge
    gpu: bool  # needs an NVIDIA GPU
    mistake: str  # the variant's name without "@tile" ("": none may be named)

    def named_right(self, found: dict[str, object] | None) -> bool:
        """Whether a WA test's mistake is this case's (the tile and a "_nan" fill aside)."""
        if not self.mistake:
            return found is None
        name = str((found or {}).get("name", "")).split("@")[0]
        return name in (self.mistake, f"{self.mistake}_nan")


def load_case(directory: Path) -> MistakeCase:
    data = tomllib.loads((directory / "expected.toml").read_text())
    files = {p.name: p.read_bytes() for p in sorted(directory.iterdir())
             if p.is_file() and p.name != "expected.toml"}
    return MistakeCase(directory.name, files, data["language"], tuple(data["verdicts"]),
                       tuple(data["tests"]), bool(data.get("gpu", False)), data["mistake"])


def all_cases() -> list[MistakeCase]:
    return [load_case(p.parent) for p in sorted(CORPUS.glob("*/expected.toml"))]
