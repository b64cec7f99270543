"""A small Dockerfile reader for structure tests: stages, their instructions, ARG defaults."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Stage:
    """One `FROM ... AS name` stage."""

    name: str  # the stage name (the compose build target)
    base: str  # the image it starts from, ARG defaults substituted
    instructions: list[tuple[str, str]] = field(default_factory=list)  # (KEYWORD, arguments)

    def all(self, keyword: str) -> list[str]:
        return [args for key, args in self.instructions if key == keyword]

    def last(self, keyword: str) -> str | None:
        found = self.all(keyword)
        return found[-1] if found else None


def logical_lines(text: str) -> list[str]:
    """Instructions with backslash continuations joined and comments dropped."""
    lines: list[str] = []
    current = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        lines.append(current + stripped)
        current = ""
    return lines


def parse(path: Path) -> dict[str, Stage]:
    """Stages by name; global ARG defaults are substituted into FROM lines."""
    args: dict[str, str] = {}
    stages: dict[str, Stage] = {}
    stage: Stage | None = None
    for line in logical_lines(path.read_text()):
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "ARG" and stage is None and "=" in rest:
            name, _, value = rest.partition("=")
            args[name.strip()] = value.strip()
        elif keyword == "FROM":
            match = re.fullmatch(r"(\S+)\s+AS\s+(\S+)", rest.strip(), flags=re.IGNORECASE)
            assert match, f"every stage is named: FROM {rest}"
            base = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], match.group(1))
            stage = stages.setdefault(match.group(2), Stage(match.group(2), base))
        elif stage is not None:
            stage.instructions.append((keyword, rest.strip()))
    return stages


def exec_form(arguments: str) -> list[str]:
    """A JSON exec-form CMD/ENTRYPOINT/HEALTHCHECK CMD as an argv list."""
    start = arguments.index("[")
    return json.loads(arguments[start:])
