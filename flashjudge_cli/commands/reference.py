"""`flashjudge reference IN -o OUT [--device auto|cpu|gpu]`: an input file's reference output."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kernels.fileformat import FormatError, read_header
from kernels.reference import DEVICES, ReferenceError, compute_reference


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("reference", help="write the reference output for an input file")
    parser.add_argument("input", type=Path, help="input file in the homework format")
    parser.add_argument(
        "-o", "--output", type=Path, required=True, help="where to write the output"
    )
    parser.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="gpu: the CUDA kernel; cpu: the float64 reference; auto: gpu if usable",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Validate the input, compute, report which reference ran and how long it took."""
    err = Console(stderr=True)
    try:
        header = read_header(args.input)
        t0 = time.perf_counter()
        name = compute_reference(args.input, args.output, args.device)
    except FormatError as exc:
        err.print(f"[red]invalid input[/red] ({exc.field}): {escape(str(exc))}")
        return 2
    except ReferenceError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        return 2
    except OSError as exc:
        reason = escape(f"cannot write {args.output}: {exc.strerror or exc}")
        err.print(f"[red]error:[/red] {reason}")
        return 2
    seconds = time.perf_counter() - t0
    Console().print(
        f"wrote {args.output} ({header.output_bytes:,} bytes, B={header.B} "
        f"N={header.N} d={header.d}) with {name} in {seconds:.2f} s"
    )
    return 0
