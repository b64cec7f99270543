"""No secret is committed: real credentials live only in a deployment's `.env`.

The scan covers every file git would commit (tracked, or new and not ignored). Known token
formats are refused anywhere; connection URLs outside tests/ (where tests plant fake credentials
on purpose, to check that nothing leaks them) and secret-named settings must hold either a
`${VARIABLE}` reference or an obvious placeholder.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from . import composefile

REPO = composefile.REPO
PLACEHOLDER = re.compile(r"change-me|example|placeholder|\$\{|\$\$|\{\w*\}|<[^>]+>"
                         r"|^(?:pw|pass|password|secret|x+|\*+|\.\.\.)$", re.IGNORECASE)
SECRET_NAME = re.compile(r"PASSWORD|SECRET|TOKEN|PASSPHRASE|BASIC_AUTH|API_KEY", re.IGNORECASE)
TOKEN_FORMATS = {
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE" r" KEY-----"),
    "AWS access key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "Slack token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    "OpenAI-style key": re.compile(r"\bsk-[A-Za-z0-9_-]{32,}"),
}
URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@'\"]*:([^\s@/'\"]+)@")
DEPLOY_FILES = ("docker-compose.yml", "docker-compose.node.yml", ".env.example", "Dockerfile")


def committed_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                         cwd=REPO, capture_output=True, check=True).stdout
    return [REPO / name for name in out.decode().split("\0") if name]


def findings(path: Path, urls: bool = True) -> list[str]:
    """What in `path` looks like a committed secret (empty when clean); `urls`: check URLs too."""
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []  # binary or vanished: no text secret to leak
    found = [f"{path.name}: {kind}" for kind, rx in TOKEN_FORMATS.items() if rx.search(text)]
    for match in URL_PASSWORD.finditer(text) if urls else ():
        if not PLACEHOLDER.search(match.group(1)):
            found.append(f"{path.name}: password in URL {match.group(0)!r}")
    return found


def test_no_committed_file_holds_a_secret() -> None:
    tests = REPO / "tests"
    problems = [f for path in committed_files() if path.is_file()
                for f in findings(path, urls=not path.is_relative_to(tests))]
    assert problems == []


def test_the_scan_finds_a_planted_secret(tmp_path: Path) -> None:
    planted = tmp_path / "settings.py"
    planted.write_text('DB = "postgresql://judge:hunter2hunter2@db:5432/judge"\n'
                       'KEY = "AKIA' + "ABCDEFGHIJKLMNOP" + '"\n')
    assert len(findings(planted)) == 2
    planted.write_text('DB = "postgresql://judge:${POSTGRES_PASSWORD}@db:5432/judge"\n')
    assert findings(planted) == []
    planted.write_text("e.g. `postgresql+psycopg://user:pw@host/db`\n")
    assert findings(planted) == []


def test_env_example_holds_only_placeholders_for_secrets() -> None:
    values = composefile.read_env_file(REPO / ".env.example")
    secrets = {k: v for k, v in values.items() if SECRET_NAME.search(k)}
    assert {"POSTGRES_PASSWORD", "REDIS_PASSWORD", "FLASHJUDGE_SECRET_KEY"} <= set(secrets)
    for key, value in secrets.items():
        assert "change-me" in value, f".env.example {key} is not a placeholder"


@pytest.mark.parametrize("name", DEPLOY_FILES[:2])
def test_compose_reads_every_secret_from_the_environment(name: str) -> None:
    for service, spec in composefile.load_raw(name)["services"].items():
        for key, value in (spec.get("environment") or {}).items():
            if SECRET_NAME.search(key) or "://" in str(value):
                assert "${" in str(value), f"{service}.{key} is written into {name}"
        command = spec.get("command") or []
        if "--requirepass" in command:
            assert command[command.index("--requirepass") + 1].startswith("${"), service


def test_the_real_env_file_is_never_committed() -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=REPO)
    assert ignored.returncode == 0, "add .env to .gitignore"
    assert not (REPO / ".env").exists() or (REPO / ".env") not in committed_files()
