"""docs/architecture.md's walk of one submission, upload to scoreboard, checked against the code:
a moved file, a renamed function, a dropped import, a task sent under another name or a listener no
longer registered fails here, naming the row (read with `ast`: nothing is imported)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from import_reader import PACKAGES, module_name, read_imports, tree_modules

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"
HEADING = "### One submission, upload to scoreboard"


@dataclass(frozen=True)
class Step:
    number: int
    file: str
    function: str
    source: int | None  # the step it is reached from
    link: str

    def __str__(self) -> str:
        return f"step {self.number} ({self.file} {self.function})"

    @property
    def module(self) -> str:
        return module_of(self.file)


def module_of(file: str) -> str:
    return module_name(Path(file))


def table_rows() -> list[str]:
    """The lines of the first table under HEADING, past its header and rule."""
    lines = DOC.read_text().split(HEADING, 1)[-1].splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), len(lines))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start + 2:end]


def walk() -> list[Step]:
    """The rows of the table under HEADING."""
    steps = []
    for row in table_rows():
        cells = [c.strip().strip("`") for c in row.strip("|").split("|")]
        steps.append(Step(int(cells[0]), cells[1], cells[2],
                          int(cells[3]) if cells[3] else None, cells[4]))
    return steps


@cache
def tree(file: str) -> ast.Module:
    path = REPO / file
    return ast.parse(path.read_text(), str(path))


def file_of(module: str) -> str:
    path = Path(*module.split("."))
    return str(path / "__init__.py") if (REPO / path).is_dir() else f"{path}.py"


@cache
def project_modules() -> dict[str, Path]:
    return tree_modules(REPO, PACKAGES)


@cache
def imports(file: str) -> set[str]:
    """Modules a file imports (`from a import b` names a, and a.b where b is a module), late ones
    too (bench/import_reader.py)."""
    return {i.name for i in read_imports(REPO / file, module_of(file), project_modules())}


def reaches(file: str, module: str) -> bool:
    """`file` imports `module`, or its package whose __init__ imports it (a re-export)."""
    package = module.rpartition(".")[0]
    return module in imports(file) or (
        package in imports(file) and module in imports(file_of(package)))


def defines(file: str, function: str) -> bool:
    """`function` (or `Class.method`) is defined at the top of `file`."""
    *owner, name = function.split(".")
    body = tree(file).body
    if owner:
        body = [n for c in body if isinstance(c, ast.ClassDef) and c.name == owner[0]
                for n in c.body]
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
               for n in body)


@cache
def task_members() -> dict[str, str]:
    """Task name -> its member of flashjudge.contract's Task enum ("flashjudge.judge": "JUDGE")."""
    enum = next(n for n in tree("flashjudge/contract/names.py").body
                if isinstance(n, ast.ClassDef) and n.name == "Task")
    return {n.value.value: n.targets[0].id for n in enum.body if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
            and isinstance(n.targets[0], ast.Name)}


def names_task(file: str, task: str) -> bool:
    """The file names the task: `Task.MEMBER` or the name as a string."""
    member = task_members().get(task)
    return any((isinstance(n, ast.Attribute) and n.attr == member
                and isinstance(n.value, ast.Name) and n.value.id == "Task")
               or (isinstance(n, ast.Constant) and n.value == task) for n in ast.walk(tree(file)))


def registers_tasks(file: str) -> bool:
    """The file makes tasks: `<celery app>.task(name=...)`."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr == "task" and any(k.arg == "name" for k in n.keywords)
               for n in ast.walk(tree(file)))


def project_files() -> list[str]:
    return sorted(str(p.relative_to(REPO)) for p in project_modules().values()
                  if "migrations" not in p.parts)


def is_listen(node: ast.AST, function: str) -> bool:
    """`event.listen(target, "name", function)` (or `module.function` as its third argument)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "listen" and len(node.args) == 3):
        return False
    fn = node.args[2]
    return getattr(fn, "id", None) == function or getattr(fn, "attr", None) == function


def registrations(function: str) -> list[tuple[str, str]]:
    """(file, enclosing function) of each `event.listen(..., function)` in the project."""
    found = []
    for file in project_files():
        for outer in ast.walk(tree(file)):
            if isinstance(outer, ast.FunctionDef) and any(
                    is_listen(n, function) for n in ast.walk(outer)):
                found.append((file, outer.name))
    return found


def installed_by(file: str, installer: str) -> list[str]:
    """Files that import `file`'s module and call its `installer`."""
    module = module_of(file)
    return [f for f in project_files() if f != file and reaches(f, module) and any(
        isinstance(n, ast.Call) and installer in (getattr(n.func, "id", None),
                                                  getattr(n.func, "attr", None))
        for n in ast.walk(tree(f)))]


def problem(step: Step, before: Step | None) -> str | None:
    """What in the code contradicts this row, or None."""
    if not (REPO / step.file).is_file():
        return "no such file"
    if not defines(step.file, step.function):
        return f"{step.function} is not defined there"
    return None if before is None else link_problem(step, before)


def link_problem(step: Step, before: Step) -> str | None:
    kind, _, task = step.link.partition(" ")
    if kind == "import" and not reaches(before.file, step.module):
        return f"{before.file} (step {before.number}) does not import {step.module}"
    if kind == "reads" and not reaches(step.file, before.module):
        return f"it does not import {before.module} (step {before.number})"
    if kind == "task" and not names_task(before.file, task):
        return f"{before.file} (step {before.number}) does not send {task}"
    if kind == "task" and not (names_task(step.file, task) and registers_tasks(step.file)):
        return f"it registers no task {task}"
    if kind == "listener":
        return listener_problem(step)
    if kind not in ("import", "reads", "task", "listener"):
        return f"unknown link {step.link!r}"
    return None


def listener_problem(step: Step) -> str | None:
    name = step.function.rpartition(".")[2]
    places = registrations(name)
    if not places:
        return f"no event.listen(..., {name}) in the project"
    if not any(installed_by(file, installer) for file, installer in places):
        return f"{' or '.join(f'{f}:{i}' for f, i in places)} registers it, but nothing calls that"
    return None


def test_the_walk_has_its_steps_in_order() -> None:
    steps = walk()
    assert steps, f"no table under {HEADING!r} in {DOC}"
    assert [s.number for s in steps] == list(range(1, len(steps) + 1))


@pytest.mark.parametrize("step", walk(), ids=lambda s: f"step{s.number}")
def test_each_step_is_in_the_code_and_reached_as_the_table_says(step: Step) -> None:
    earlier = {s.number: s for s in walk() if s.number < step.number}
    if step.source is not None and step.source not in earlier:
        pytest.fail(f"{step}: reached from step {step.source}, which is not an earlier row")
    found = problem(step, earlier.get(step.source or 0))
    assert found is None, f"{step}: {found}"


def test_the_check_sees_a_broken_row() -> None:
    """A row naming a link the code does not have fails, so the table cannot drift unseen."""
    steps = {s.number: s for s in walk()}
    wrong = Step(99, "kernels/compare.py", "compare_files", 1, "import")
    assert problem(wrong, steps[1]) is not None
    moved = Step(99, "app/submissions/recording.py", "record_result", 8, "task flashjudge.judge")
    assert re.search("registers no task", problem(moved, steps[8]) or "")
