"""docs/deployment.md stays true: its commands, services and settings exist as written."""

from __future__ import annotations

import re
import shlex

from flashjudge_cli.main import COMMANDS, build_parser

from . import composefile

DOC = (composefile.REPO / "docs" / "deployment.md").read_text()
CODE = "\n".join(re.findall(r"```[a-z]*\n(.*?)```", DOC, flags=re.DOTALL))
STOP_TOKENS = {"|", "&&", ">", "<", "\\", ";"}


def flashjudge_invocations() -> list[list[str]]:
    """argv (after `flashjudge`) of each command run in a shell or a service's container."""
    joined = re.sub(r"\\\n\s*", " ", CODE)
    services = "|".join(map(re.escape, composefile.load_raw()["services"]))
    found = []
    pattern = rf"(?:^|\b(?:{services})\s+)flashjudge\s+([a-z].*)$"
    for match in re.finditer(pattern, joined, flags=re.M):
        argv = []
        for token in shlex.split(match.group(1)):
            if token in STOP_TOKENS:
                break
            argv.append(token)
        found.append(argv)
    return found


def compose_variables() -> set[str]:
    text = "".join((composefile.REPO / name).read_text()
                   for name in ("docker-compose.yml", "docker-compose.node.yml"))
    return set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)", text))


def test_every_flashjudge_command_in_the_doc_parses() -> None:
    invocations = flashjudge_invocations()
    assert len(invocations) >= 4
    for argv in invocations:
        assert argv[0] in COMMANDS, argv
        build_parser(argv).parse_args(argv)  # exits 2 on an unknown option


def test_the_doc_names_every_compose_service() -> None:
    for service in composefile.load_raw()["services"]:
        assert f"`{service}`" in DOC, service


def test_settings_the_doc_tells_to_set_are_ones_compose_reads() -> None:
    told = set(re.findall(r"^([A-Z][A-Z0-9_]+)=", CODE, flags=re.M))
    told |= set(re.findall(r"s/\^([A-Z][A-Z0-9_]+)=", CODE))
    assert told, "the doc sets nothing?"
    assert told <= compose_variables(), told - compose_variables()
