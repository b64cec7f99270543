"""`flashjudge prepare`: fill the cache with a suite's inputs and guarded expected outputs.

Exit status: 0 when every test is prepared, 1 when the trivial-answer guard refuses a test, 2 for
anything unusable (unknown suite, no GPU for --device gpu, unwritable cache).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kernels.fileformat import FormatError
from kernels.reference import DEVICES, ReferenceError
from testcases.prepared import (
    GuardError,
    PreparedTest,
    PrepareEvent,
    prepare_suite,
)
from testcases.suite import SuiteError, load_suite
from worker.settings import get_worker_settings

STAGES = {
    "input": "generating input",
    "expected": "computing expected output",
    "guard": "checking trivial answers",
    "done": "done",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("prepare", help="fill the cache of inputs and expected outputs")
    parser.add_argument("--suite", default="hw4-mini", help="suite name (default hw4-mini)")
    parser.add_argument("--seed", type=int, help="override the suite's seeds (hidden variants)")
    parser.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="which reference computes the expected outputs (default auto)",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="cache directory (default $FLASHJUDGE_DATA_DIR/cache, data dir ./data)",
    )
    parser.add_argument("--tests", help="comma-separated test ids (default: all)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    err = Console(stderr=True)
    tests = args.tests.split(",") if args.tests else None
    try:
        suite = load_suite(args.suite)
        with _ProgressBar(err) as bar:
            prepared = prepare_suite(
                suite, args.cache_dir, args.device, args.seed, bar.on_event, tests
            )
    except GuardError as exc:
        err.print(f"[red]refused:[/red] {escape(str(exc))}")
        return 1
    except (SuiteError, ReferenceError, FormatError) as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        return 2
    except OSError as exc:
        err.print(f"[red]error:[/red] cannot write the cache: {escape(str(exc))}")
        return 2
    cache = args.cache_dir if args.cache_dir is not None else get_worker_settings().cache_dir
    Console().print(_table(suite.name, prepared, cache))
    return 0


class _ProgressBar:
    """A rich progress bar over tests, fed by prepare_suite's PrepareEvent callbacks."""

    def __init__(self, console: Console) -> None:
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        self.progress = Progress(*columns, console=console)
        self.task = self.progress.add_task("preparing", total=None)

    def __enter__(self) -> _ProgressBar:
        self.progress.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.progress.__exit__(kind, exc, tb)

    def on_event(self, event: PrepareEvent) -> None:
        done = event.index + (1 if event.stage == "done" else 0)
        self.progress.update(
            self.task,
            total=event.total,
            completed=done,
            description=f"{event.test_id}: {STAGES.get(event.stage, event.stage)}",
        )


def _table(suite: str, prepared: dict[str, PreparedTest], cache: Path) -> Table:
    table = Table(title=f"prepared: suite {suite}", caption=f"cache: {cache}")
    for column in ("test", "shape", "seed", "reference", "zeros err", "mean(V) err", "cached"):
        table.add_column(column)
    for t in prepared.values():
        zeros = f"{t.guard.zeros_error:.3g}" if t.guard else "-"
        mean_v = f"{t.guard.mean_v_error:.3g}" if t.guard else "-"
        table.add_row(
            t.spec.id,
            f"{t.spec.B}x{t.spec.N}x{t.spec.d}",
            str(t.seed),
            t.reference,
            zeros,
            mean_v,
            "yes" if t.reused else "new",
        )
    return table
