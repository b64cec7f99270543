"""What the README promises a new user is there: every route it names answers that path (and
method) in the app, every `flashjudge` command line it shows parses, every setting it documents
is read by the service or a worker. One test per claim, so a failure names the sentence to fix.
(Behaviours the README describes have their own tests beside the code: stopping serve in
tests/flashjudge_cli/commands/test_serve_stop.py, the students' install in
tests/flashjudge_cli/test_student_cli.py, archived boards, time zones, download names, phones
and the course settings in tests/app/pages/test_first_use_browser.py.)"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from starlette.routing import Match

from app.core.config import Settings
from app.main import create_app
from flashjudge_cli.main import build_parser
from worker.settings import WorkerSettings

REPO = Path(__file__).resolve().parents[1]
TEXT = (REPO / "README.md").read_text()
NOT_ROUTES = ("/.well-known", "/dev/", "/tmp", "/proc", "/sys/", "/usr/", "/opt/", "/etc/")
ROUTE = re.compile(r"`(?:(GET|POST|PUT|DELETE) )?(/[^`\s]*)`")
PLACEHOLDER = re.compile(r"\b(NAME|ID|N)\b")


def route_claims() -> list[tuple[str, str]]:
    found = {(method or "GET", path) for method, path in ROUTE.findall(TEXT)
             if not path.startswith(NOT_ROUTES)}
    return sorted(found)


def command_claims() -> list[str]:
    """`flashjudge ...` and `.venv/bin/flashjudge ...` lines of the README's shell blocks."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", TEXT, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("#", 1)[0].strip()
            if re.match(r"(\S*/)?flashjudge ", line) and "<" not in line:
                lines.append(line)
    return lines


def setting_claims() -> list[str]:
    return sorted(set(re.findall(r"^\| `(FLASHJUDGE_[A-Z0-9_]+)`", TEXT, re.M)))


@pytest.fixture(scope="module")
def routes() -> list:
    return list(create_app(Settings(environment="test", migrate_on_start=False)).routes)


def paths(routes: list) -> list[str]:
    """Every route's path, the included routers' too."""
    found: list[str] = []
    for route in routes:
        inner = getattr(route, "original_router", None)
        found += paths(list(inner.routes)) if inner is not None else [getattr(route, "path", "")]
    return found


@pytest.mark.parametrize(("method", "path"), route_claims())
def test_a_route_the_readme_names_exists(routes, method: str, path: str):
    concrete = PLACEHOLDER.sub("x", path.split("?", 1)[0]).replace("...", "x")
    scope = {"type": "http", "method": method, "path": concrete, "root_path": "",
             "query_string": b"", "headers": []}
    served = any(r.matches(scope)[0] == Match.FULL for r in routes)
    under = any(p.startswith(concrete + "/") for p in paths(routes))  # a prefix ("under ...")
    assert served or under, f"README names {method} {path}, which the app does not serve"


@pytest.mark.parametrize("line", command_claims())
def test_a_command_line_the_readme_shows_parses(line: str):
    argv = shlex.split(line)[1:]
    parser = build_parser(argv)
    try:
        parser.parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"README's `{line}` does not parse (exit {exc.code})")


@pytest.mark.parametrize("name", setting_claims())
def test_a_setting_the_readme_documents_is_read(name: str):
    field = name.removeprefix("FLASHJUDGE_").lower()
    known = set(Settings.model_fields) | set(WorkerSettings.model_fields)
    assert field in known, f"README documents {name}, which nothing reads"


def test_the_readme_says_how_to_stop_and_how_students_install():
    assert "flashjudge stop" in TEXT and "Ctrl-C" in TEXT
    assert "pip install ./student-cli" in TEXT
