"""The `flashjudge` console script: one argparse parser, one module per subcommand.

Each module in `flashjudge_cli.commands` exposes `register(subparsers)`, which adds its parser and
sets `func` (taking the parsed namespace, returning the exit status). Modules are imported only when
their command runs, so `flashjudge compare` does not pay for importing the web stack.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence

# name -> (module, one-line help). Add a subcommand by adding a module and a line here.
COMMANDS: dict[str, tuple[str, str]] = {
    "testcase": ("flashjudge_cli.commands.testcase", "generate a suite's input files"),
    "reference": ("flashjudge_cli.commands.reference",
                  "write the reference output for an input file"),
    "compare": ("flashjudge_cli.commands.compare", "compare an output file with the expected one"),
    "prepare": ("flashjudge_cli.commands.prepare", "fill the cache of inputs and expected outputs"),
    "judge-local": ("flashjudge_cli.commands.judge_local", "judge a submission on this machine"),
    "serve": ("flashjudge_cli.commands.serve", "run the web service and a worker on this machine"),
    "stop": ("flashjudge_cli.commands.stop", "stop the flashjudge serve of this data dir"),
    "worker": ("flashjudge_cli.commands.worker", "run judge workers (one process per GPU)"),
    "submit": ("flashjudge_cli.commands.submit", "submit sources to a flashjudge server"),
    "users": ("flashjudge_cli.commands.users", "manage users: import a roster, add one"),
    "deadline": ("flashjudge_cli.commands.deadline", "set an assignment's due time, late policy "
                                                     "and extensions"),
    "assignment": ("flashjudge_cli.commands.assignment", "a course's assignments: add, change, "
                                                         "open, close, export, import"),
    "term": ("flashjudge_cli.commands.term", "a course's terms: archive, start the next"),
    "scoreboard": ("flashjudge_cli.commands.scoreboard",
                   "rebuild or check the scoreboard's standing"),
}


def _available(name: str) -> bool:
    module = COMMANDS[name][0]
    return importlib.util.find_spec(module) is not None


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    """Build the parser; only the chosen subcommand's module is imported."""
    parser = argparse.ArgumentParser(prog="flashjudge", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, (module, help_text) in COMMANDS.items():
        if not _available(name):
            continue
        if name == chosen:
            importlib.import_module(module).register(sub)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(args_list).parse_args(args_list)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
