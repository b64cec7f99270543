"""bench/import_reader.py, the one reader of imports behind the layer tests, the walk test and
bench/import_graph.py: what it counts as an import decides what those checks can see."""

from __future__ import annotations

from pathlib import Path

from import_reader import Import, module_name, read_imports, tree_modules

FILES = {
    "shop/__init__.py": "",
    "shop/stock.py": "",
    "shop/till/__init__.py": "from . import receipt\n",
    "shop/till/receipt.py": "",
    "shop/till/pay.py": (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import os.path\n"
        "from .. import stock\n"
        "from ..stock import Shelf\n"
        "from .receipt import print_it\n"
        "from shop.till import receipt, helper\n"
        "if TYPE_CHECKING:\n"
        "    from shop.migrations import old\n"
        "def late():\n"
        "    import shop.stock\n"
    ),
    "shop/migrations/old.py": "",
}


def make_tree(root: Path) -> None:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_modules_of_a_tree_are_named_from_their_paths(tmp_path: Path) -> None:
    make_tree(tmp_path)
    assert sorted(tree_modules(tmp_path, ("shop",))) == [
        "shop", "shop.migrations.old", "shop.stock", "shop.till", "shop.till.pay",
        "shop.till.receipt"]
    assert "shop.migrations.old" not in tree_modules(tmp_path, ("shop",), skip=("migrations",))
    assert module_name(Path("shop/till/__init__.py")) == "shop.till"


def test_every_import_is_read_absolute_with_its_line(tmp_path: Path) -> None:
    """Relative imports are resolved against the package; `from a import b` names a.b only where
    b is a module; late imports count, type-only ones are marked."""
    make_tree(tmp_path)
    known = tree_modules(tmp_path, ("shop",))
    found = read_imports(tmp_path / "shop/till/pay.py", "shop.till.pay", known)
    assert found == [
        Import("__future__", 1, False), Import("typing", 2, False), Import("os.path", 3, False),
        Import("shop", 4, False), Import("shop.stock", 4, False),
        Import("shop.stock", 5, False),
        Import("shop.till.receipt", 6, False),
        Import("shop.till", 7, False), Import("shop.till.receipt", 7, False),
        Import("shop.migrations", 9, True), Import("shop.migrations.old", 9, True),
        Import("shop.stock", 11, False),
    ]


def test_a_package_reads_its_relative_imports_from_itself(tmp_path: Path) -> None:
    make_tree(tmp_path)
    known = tree_modules(tmp_path, ("shop",))
    found = read_imports(tmp_path / "shop/till/__init__.py", "shop.till", known)
    assert [i.name for i in found] == ["shop.till", "shop.till.receipt"]
