"""The migrations read in file order: one id style (the file's name), numbered by their place in
one straight chain, each docstring's Revision ID and Revises saying what the code says."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from alembic.script import ScriptDirectory

from app.db.migrate import RENAMED, alembic_config

VERSIONS = Path(__file__).resolve().parents[3] / "app" / "migrations" / "versions"


def migrations() -> list[tuple[Path, str, str | None, str]]:
    """(file, revision, down_revision, docstring) of each migration file, in file-name order."""
    found = []
    for path in sorted(VERSIONS.glob("[0-9]*.py")):
        tree = ast.parse(path.read_text(), str(path))
        values = {t.id: ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                  for t in n.targets if isinstance(t, ast.Name)}
        found.append((path, values["revision"], values["down_revision"],
                      ast.get_docstring(tree) or ""))
    return found


def test_each_file_is_its_place_in_one_straight_chain() -> None:
    previous = None
    for place, (path, revision, down, _) in enumerate(migrations(), start=1):
        assert re.fullmatch(r"\d{4}_[a-z0-9_]+", revision), f"{path.name}: id style {revision!r}"
        assert revision == path.stem, f"{path.name}: revision {revision!r} is not the file's name"
        assert int(path.stem[:4]) == place, f"{path.name}: number {path.stem[:4]}, place {place}"
        assert down == previous, f"{path.name}: down_revision {down!r}, previous file {previous!r}"
        previous = revision


def test_alembic_sees_one_base_and_one_head() -> None:
    scripts = ScriptDirectory.from_config(alembic_config("sqlite://"))
    files = migrations()
    assert scripts.get_bases() == [files[0][1]]
    assert scripts.get_heads() == [files[-1][1]]


def test_each_docstring_names_its_revision_and_what_it_revises() -> None:
    for path, revision, down, doc in migrations():
        assert re.search(rf"^Revision ID: {revision}$", doc, re.M), f"{path.name}: Revision ID"
        revises = re.search(r"^Revises:(.*)$", doc, re.M)
        assert revises and revises.group(1).strip() == (down or ""), f"{path.name}: Revises"


def test_old_ids_name_revisions_of_the_chain_and_none_is_reused() -> None:
    """A database stamped before the renumbering is renamed to a revision that exists; an old id
    that is also a current one would rename a database that is already right."""
    current = {revision for _, revision, _, _ in migrations()}
    assert set(RENAMED.values()) <= current
    assert not set(RENAMED) & current
