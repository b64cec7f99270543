"""Reading docker-compose files the way Compose does: YAML (anchors, merge keys) + interpolation.

Compose substitutes `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`
and `$VAR` from the environment and `.env`, and turns `$$` into `$`. Tests interpolate with the
committed `.env.example`, so a variable the file requires but the example lacks is caught here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
_BRACED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])((?:[^{}]|\{[^{}]*\})*))?\}")
_BARE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


class MissingVariable(ValueError):
    """A `${VAR:?message}` whose variable is unset: Compose refuses to start."""


def read_env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines of a .env file (comments and blank lines skipped)."""
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def interpolate_text(text: str, env: dict[str, str]) -> str:
    """Substitute variables in one string as Compose does (nested defaults included)."""

    def braced(match: re.Match[str]) -> str:
        name, op, arg = match.group(1), match.group(2), match.group(3) or ""
        value = env.get(name)
        if op in (":-", ":?") and value == "":
            value = None
        if value is not None:
            return value
        if op and op.endswith("?"):
            raise MissingVariable(f"{name}: {arg}")
        return interpolate_text(arg, env) if op else ""

    placeholder = "\0dollar\0"
    text = text.replace("$$", placeholder)
    text = _BRACED.sub(braced, text)
    text = _BARE.sub(lambda m: env.get(m.group(1), ""), text)
    return text.replace(placeholder, "$")


def interpolate(node: Any, env: dict[str, str]) -> Any:
    """Interpolate every string in a loaded compose document."""
    if isinstance(node, str):
        return interpolate_text(node, env)
    if isinstance(node, list):
        return [interpolate(item, env) for item in node]
    if isinstance(node, dict):
        return {key: interpolate(value, env) for key, value in node.items()}
    return node


def load_raw(name: str = "docker-compose.yml") -> dict[str, Any]:
    """The compose file as YAML, anchors and `<<` merges resolved, variables left as written."""
    return yaml.safe_load((REPO / name).read_text())


def load(name: str = "docker-compose.yml", env: dict[str, str] | None = None) -> dict[str, Any]:
    """The compose file as Compose would run it with `env` (default: .env.example)."""
    values = read_env_file(REPO / ".env.example") if env is None else env
    return interpolate(load_raw(name), values)
