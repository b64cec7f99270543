"""`flashjudge judge-local SOURCE...`: judge a submission on this machine, without the service.

Shows live progress, then a table (test, verdict, seconds, max error) and the score; `--json` prints
exactly one JSON object on stdout instead (the shape of flashjudge.contract.JudgeResult.to_dict()).
Exit status: 0 all tests passed, 1 some failed (or CE), 2 bad usage, 3 a system error of ours.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from flashjudge.contract import LANGUAGES, JudgeResult, TestResult, Verdict
from flashjudge.timefmt import seconds_text
from flashjudge_cli.commands.machine import default_suite
from testcases.suite import Suite, SuiteError, load_suite
from worker.pipeline import JudgeConfig, JudgeEvent, JudgeRequest, judge
from worker.sandbox.bwrap import SandboxUnavailable
from worker.settings import get_worker_settings

COLORS = {Verdict.AC: "green", Verdict.WA: "red", Verdict.TLE: "yellow", Verdict.SE: "magenta"}
EXIT_PASSED, EXIT_FAILED, EXIT_USAGE, EXIT_SYSTEM = 0, 1, 2, 3


class UsageError(ValueError):
    """A command line the judge cannot act on; the message says which argument."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "judge-local", help="judge a submission on this machine",
        description="Judge SOURCE files on this machine in the sandbox and print the verdicts.",
        epilog="Exit status: 0 all passed, 1 some test failed or CE, 2 bad usage, 3 system error.",
    )
    parser.add_argument("sources", nargs="+", type=Path, metavar="SOURCE",
                        help="submission files (hw4.cu [Makefile], a .cu with solve(), or .c/.cpp)")
    parser.add_argument("--language", choices=sorted(LANGUAGES),
                        help="the submission kind (default: inferred from the files)")
    parser.add_argument("--suite", default=None,
                        help="suite to judge against (default: $FLASHJUDGE_SUITE, else hw4 "
                             "when a GPU is present and hw4-mini without, as `serve` does)")
    parser.add_argument("--tests", default=None, metavar="IDS",
                        help="tests to run, e.g. t01-t10 or t01,t05 (default: all)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object on stdout instead of the table")
    parser.add_argument("--insecure", action="store_true",
                        help="development only: run even without bubblewrap/cgroups (every result "
                             "is marked INSECURE)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="cache of inputs and expected outputs (default: $FLASHJUDGE_DATA_DIR"
                             "/cache, the data dir defaulting to ./data)")
    parser.add_argument("--seed", type=int, default=None, help="override every test's seed")
    parser.set_defaults(func=run)


def parse_tests(spec: str | None, suite: Suite) -> list[str] | None:
    """"t01-t10,t15" -> the ids in suite order; ranges are inclusive. None means all."""
    if not spec:
        return None
    order = [t.id for t in suite.tests]
    chosen: list[str] = []
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        first, _, last = part.partition("-")
        for test_id in (first, last or first):
            if test_id not in order:
                raise UsageError(f"--tests: suite {suite.name} has no test {test_id!r}")
        start, stop = order.index(first), order.index(last or first)
        if stop < start:
            raise UsageError(f"--tests: {part!r} runs backwards")
        chosen += [i for i in order[start:stop + 1] if i not in chosen]
    return chosen


def read_sources(paths: list[Path]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path in paths:
        try:
            files[path.name] = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return files


def _request(args: argparse.Namespace) -> JudgeRequest:
    suite_name = args.suite or default_suite()
    suite = load_suite(suite_name)
    return JudgeRequest(language=args.language, files=read_sources(args.sources),
                        suite=suite_name, tests=parse_tests(args.tests, suite), seed=args.seed)


def run(args: argparse.Namespace) -> int:
    err = Console(stderr=True)
    try:
        request = _request(args)
        settings = get_worker_settings()
        cache_dir = args.cache_dir or settings.cache_dir
        config = settings.judge_config(insecure=args.insecure)
        if args.json:
            result = judge(request, cache_dir, config=config)
        else:
            result = _judge_with_progress(request, cache_dir, config, err)
    except (UsageError, SuiteError, SandboxUnavailable) as exc:
        return _fail(args.json, err, _explain(exc))
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        show(result, Console())
    return _exit_status(result)


def _explain(exc: Exception) -> str:
    """The error, with what to do about it."""
    if not isinstance(exc, SandboxUnavailable):
        return str(exc)
    if "GPU" in str(exc):
        return f"{exc}: the CUDA languages need an NVIDIA GPU (c-program runs on the CPU)"
    return f"{exc} (--insecure runs without these protections, for development only)"


def _fail(as_json: bool, err: Console, message: str) -> int:
    if as_json:
        print(json.dumps({"error": message}))
    else:
        err.print(f"[red]error:[/red] {message}", highlight=False)
    return EXIT_USAGE


def _exit_status(result: JudgeResult) -> int:
    if result.system_error:
        return EXIT_SYSTEM
    return EXIT_PASSED if result.compile.ok and result.passed == len(result.tests) else EXIT_FAILED


def _judge_with_progress(request: JudgeRequest, cache_dir: Path, config: JudgeConfig,
                         console: Console) -> JudgeResult:
    """judge() with a live progress bar on stderr, one line per finished test."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("compiling", total=None)

        def on_event(event: JudgeEvent) -> None:
            _progress_event(progress, task, event)

        return judge(request, cache_dir, on_event=on_event, config=config)


def _progress_event(progress: Progress, task: Any, event: JudgeEvent) -> None:
    if event.kind == "compile":
        ok = getattr(event.result, "ok", False)
        progress.console.print("compiled" if ok else "[red]compile error[/red]")
    elif event.kind == "prepare":
        progress.update(task, description="preparing inputs", total=event.total)
    elif event.kind == "test-start":
        progress.update(task, description=f"running {event.test_id}", completed=event.index)
    elif event.kind == "test-done" and isinstance(event.result, TestResult):
        progress.update(task, completed=event.index + 1)
        progress.console.print(_line(event.result), highlight=False)


def _verdict_text(test: TestResult) -> str:
    color = COLORS.get(test.verdict, "red")
    return f"[{color}]{test.verdict}[/{color}]"


def _line(test: TestResult) -> str:
    return f"{test.id} {_verdict_text(test)} {seconds_text(test.seconds)} s  {test.message}"


def score_line(result: JudgeResult) -> str:
    """"Score: 3/6  passed 1/2 (t06, t07 only)": the score of the tests that were judged, out of
    the best those tests can give, never the whole suite's rule applied to a few tests."""
    judged = [t.id for t in result.tests]
    only = f" ({', '.join(judged)} only)" if judged and _partial(result) else ""
    return (f"Score: [bold]{result.score}/{result.max_score}[/bold]  passed "
            f"{result.passed}/{len(judged)}{only}  time {result.total_seconds:.3f} s")


def _partial(result: JudgeResult) -> bool:
    try:
        return len(result.tests) < len(load_suite(result.suite).tests)
    except SuiteError:
        return False


def show(result: JudgeResult, console: Console) -> None:
    """The compile notes, the table of tests and the score."""
    if result.insecure:
        console.print("[bold red]INSECURE[/bold red]: judged without the sandbox's protections")
    if not result.compile.ok or result.compile.notes:
        console.print(result.compile.log or "(no compiler output)", highlight=False, markup=False)
    table = Table(title=f"{result.suite} ({result.language})")
    for column in ("test", "verdict", "seconds", "max error", "message"):
        table.add_column(column, justify="right" if column in ("seconds", "max error") else "left")
    for test in result.tests:
        error = "" if test.max_error is None else f"{test.max_error:.2e}"
        table.add_row(test.id, _verdict_text(test), seconds_text(test.seconds), error, test.message)
    console.print(table)
    for test in result.tests:
        if test.mistake and test.mistake.get("line"):  # the classic mistake the output matches
            console.print(f"{test.id}: {test.mistake['line']}", highlight=False, markup=False)
    console.print(score_line(result), highlight=False)
    if result.system_error:
        console.print(f"[magenta]system error (not your fault; judge again):[/magenta] "
                      f"{result.system_error}", highlight=False)
