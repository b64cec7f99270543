"""`flashjudge compare OUT EXPECTED`: exit 0 when it passes, 1 when it does not, 2 if unusable.

A wrong-size or NaN-holding output is a failure (1): that is the student's answer being wrong. A
missing or unreadable file, or an expected file that does not fit the input, is unusable (2).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kernels.compare import DEFAULT_TOLERANCE, CompareError, CompareReport, compare_files
from kernels.fileformat import FormatError, read_header
from kernels.mistakes.files import mistake_of_files


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("compare", help="compare an output file with the expected one")
    parser.add_argument("output", type=Path, help="the output to check")
    parser.add_argument("expected", type=Path, help="the reference output")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=DEFAULT_TOLERANCE,
        help=f"max absolute error per value (default {DEFAULT_TOLERANCE:g})",
    )
    parser.add_argument(
        "--input", type=Path, help="the input file: gives mismatches as (batch, row, col) "
        "and, when the output is wrong, the classic mistake it matches"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        header = read_header(args.input) if args.input is not None else None
        report = compare_files(args.output, args.expected, args.tolerance, header)
    except (CompareError, FormatError) as exc:
        if args.json:
            print(json.dumps({"ok": False, "status": "unusable", "message": str(exc)}))
        else:
            Console(stderr=True).print(f"[red]unusable:[/red] {escape(str(exc))}")
        return 2
    data = report.to_dict()
    if not report.ok and args.input is not None and report.status in ("fail", "nonfinite"):
        found = mistake_of_files(args.input, args.output, args.expected, args.tolerance)
        data["mistake"] = found.to_dict() if found else None
    if args.json:
        print(json.dumps(data))
    else:
        _print_report(report)
        if data.get("mistake"):
            Console().print(f"looks like: {data['mistake']['line']}", highlight=False,
                            markup=False)
    return 0 if report.ok else 1


def _print_report(report: CompareReport) -> None:
    console = Console()
    colour = "green" if report.ok else "red"
    console.print(f"[{colour}]{escape(report.message)}[/{colour}]")
    if not report.mismatches:
        return
    table = Table(title=f"first {len(report.mismatches)} mismatches")
    for column in ("batch", "row", "col", "index", "got", "want", "error"):
        table.add_column(column, justify="right")
    for m in report.mismatches:
        cells = [m.batch, m.row, m.col]
        table.add_row(
            *("-" if c is None else str(c) for c in cells),
            str(m.index),
            f"{m.got:.6g}",
            f"{m.want:.6g}",
            f"{abs(m.got - m.want):.3g}",
        )
    console.print(table)
