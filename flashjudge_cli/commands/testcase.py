"""`flashjudge testcase`: list a suite's tests and generate their input files.

Students run `flashjudge testcase gen t05 -o t05.in` to get exactly the judge's input (same seed,
same bytes), or `gen --all DIR` for a whole suite.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from flashjudge_cli.commands.machine import default_suite
from kernels.fileformat import FormatError
from testcases.generator import effective_seed, write_input
from testcases.suite import Suite, SuiteError, TestSpec, load_suite

SUITE_HELP = ("suite name (default: $FLASHJUDGE_SUITE, else hw4 with a GPU and hw4-mini "
              "without, the suite `flashjudge serve` judges on this machine)")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("testcase", help="list a suite's tests or generate their inputs")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    gen = actions.add_parser("gen", help="generate input files exactly as the judge does")
    gen.add_argument("test", nargs="?", help="test id, e.g. t05")
    gen.add_argument("-o", "--output", type=Path, help="output file (with a test id)")
    gen.add_argument("--all", type=Path, metavar="DIR", help="generate every test into DIR")
    gen.add_argument("--suite", default=None, help=SUITE_HELP)
    gen.add_argument("--seed", type=int, help="override the suite's seeds (hidden variants)")
    gen.set_defaults(func=run_gen)
    listing = actions.add_parser("list", help="print a suite's tests")
    listing.add_argument("--suite", default=None, help=SUITE_HELP)
    listing.set_defaults(func=run_list)


def run_list(args: argparse.Namespace) -> int:
    """Print the suite's tests as a table."""
    console = Console()
    try:
        suite = load_suite(args.suite or default_suite())
    except SuiteError as exc:
        Console(stderr=True).print(f"[red]error:[/red] {escape(str(exc))}")
        return 2
    console.print(_suite_table(suite))
    return 0


def _suite_table(suite: Suite) -> Table:
    title = (f"suite {suite.name}: tolerance {suite.tolerance:g}, score = "
             f"{suite.scoring.describe()} (at most {suite.max_score})")
    table = Table(title=title)
    for column in ("test", "B", "N", "d", "input MB", "time limit s", "seed"):
        table.add_column(column, justify="right")
    for t in suite.tests:
        mb = t.header.input_bytes / 1e6
        table.add_row(
            t.id, str(t.B), str(t.N), str(t.d), f"{mb:.1f}", f"{t.time_limit_s:g}", str(t.seed)
        )
    return table


def run_gen(args: argparse.Namespace) -> int:
    """Generate one test (-o) or all of them (--all DIR)."""
    err = Console(stderr=True)
    if (args.all is None) == (args.test is None) or (args.test is not None and args.output is None):
        err.print("[red]error:[/red] give either TEST -o FILE, or --all DIR")
        return 2
    try:
        suite = load_suite(args.suite or default_suite())
        specs = list(suite.tests) if args.all is not None else [suite.test(args.test)]
        paths = [args.all / f"{t.id}.in" for t in specs] if args.all else [args.output]
        _generate(specs, paths, args.seed, err)
    except (SuiteError, FormatError) as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        return 2
    except OSError as exc:
        err.print(f"[red]error:[/red] cannot write: {escape(str(exc))}")
        return 2
    return 0


def _generate(specs: list[TestSpec], paths: list[Path], seed: int | None, console: Console) -> None:
    """Write each spec to its path with one progress bar over all bytes."""
    total = sum(t.header.input_bytes for t in specs)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("generating", total=total)
        done = 0
        for spec, path in zip(specs, paths, strict=True):
            bar.update(task, description=f"{spec.id} (seed {effective_seed(spec, seed)})")
            per_batch = spec.header.input_bytes / spec.B

            def advance(batches: int, _b: int, _done: int = done, _pb: float = per_batch) -> None:
                bar.update(task, completed=_done + batches * _pb)

            write_input(path, spec, seed, progress=advance)
            done += spec.header.input_bytes
            bar.update(task, completed=done)
    for spec, path in zip(specs, paths, strict=True):
        console.print(
            f"{spec.id}: {path} ({spec.B}x{spec.N}x{spec.d}, seed {effective_seed(spec, seed)})"
        )
