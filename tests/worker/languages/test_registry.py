"""One language, one row and one class: the contract's rows and the worker's classes match one to
one, and no module but a language's own names it in code (the others read its row's fields)."""

from __future__ import annotations

import ast
from pathlib import Path

from flashjudge.contract import GPU_LANGUAGES, LANGUAGES, TOOLED_LANGUAGES
from worker.languages import REGISTRY

REPO = Path(__file__).resolve().parents[3]
# where a language's name may stand in code: its row, and its own class's module
OWN_MODULES = {"flashjudge/contract/languages.py", "worker/languages/c_program.py",
               "worker/languages/cuda_program.py", "worker/languages/cuda_kernel.py",
               "worker/languages/triton_kernel.py"}


def test_every_row_has_one_class_and_every_class_points_at_its_row() -> None:
    assert sorted(REGISTRY.names) == sorted(LANGUAGES)
    assert all(cls.facts is LANGUAGES[cls.facts.name] for cls in REGISTRY)


def test_the_derived_sets_come_from_the_rows() -> None:
    assert sorted(GPU_LANGUAGES) == ["cuda-kernel", "cuda-program", "triton-kernel"]
    assert sorted(TOOLED_LANGUAGES) == ["cuda-kernel", "cuda-program"]  # not Python's runner yet
    assert [n for n, f in LANGUAGES.items() if f.needs] == ["triton-kernel"]


def named_in_code(path: Path) -> list[str]:
    """Language names written as string constants in `path`, docstrings left out."""
    tree = ast.parse(path.read_text(), str(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return [f"{node.value!r} (line {node.lineno})" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in LANGUAGES
            and id(node) not in docstrings]


def test_no_module_of_the_worker_or_the_contract_tests_a_languages_name() -> None:
    modules = [p for folder in ("worker", "flashjudge") for p in (REPO / folder).rglob("*.py")]
    assert len(modules) > 50  # the walk found the code
    found = {rel: names for p in modules
             if (rel := str(p.relative_to(REPO))) not in OWN_MODULES
             and (names := named_in_code(p))}
    assert found == {}
