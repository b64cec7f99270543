"""app/'s own import layers, read from the imports with `ast` (bench/import_reader.py):
the database and core modules stand on nothing above them, the session listeners are
installed by the processes (app/wiring.py), and no module or folder imports one that imports
it back."""

from __future__ import annotations

from collections import defaultdict

from import_reader import read_imports

from tests.test_architecture import modules


def app_graph() -> dict[str, set[str]]:
    """Module -> the app modules it imports (a `from package import module` counts as the
    module; late and TYPE_CHECKING imports count too)."""
    found = {m: p for m, p in modules().items() if m == "app" or m.startswith("app.")}
    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        names = {i.name for i in read_imports(path, name, found)}
        graph[name] = {n for n in names if n in found and n != name}
    return graph


def folder(module: str) -> str:
    """app.submissions.lifecycle -> app.submissions; app.main -> app.main."""
    return ".".join(module.split(".")[:2])


def test_the_database_and_core_layers_import_nothing_above_them():
    """app/db and app/core are what everything stands on: deps, the body guard and the
    listeners (change feed, standing) live above them, in app/web and app/wiring.py."""
    graph = app_graph()
    up = sorted(f"{m} imports {n}" for m, deps in graph.items()
                if folder(m) in ("app.db", "app.core") for n in deps
                if folder(n) not in ("app.db", "app.core"))
    assert up == []


def test_no_module_of_app_is_in_an_import_circle():
    graph = app_graph()
    circles = [(m, n) for m, deps in graph.items() for n in deps if reaches(graph, n, m)]
    assert circles == []


def test_no_folder_of_app_imports_one_that_imports_it_back():
    arrows: dict[str, set[str]] = defaultdict(set)
    for module, deps in app_graph().items():
        arrows[folder(module)] |= {folder(n) for n in deps} - {folder(module)}
    both_ways = sorted(f"{a} <-> {b}" for a in arrows for b in arrows[a]
                       if a < b and a in arrows[b])
    assert both_ways == []


def reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return False
