"""`flashjudge submit SOURCE... --server URL`: submit, follow the judging live, print the table.

Authenticates with a personal API token (--token or FLASHJUDGE_TOKEN), or asks for a username and
password and uses the OAuth2 password flow. Progress comes from the submission's SSE stream.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from flashjudge.contract import MAX_FILE_BYTES, MAX_FILES
from flashjudge.timefmt import seconds_text

console = Console()


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("submit", help="submit sources to a flashjudge server")
    parser.add_argument("sources", nargs="+", type=Path, metavar="SOURCE")
    parser.add_argument("--server", default=os.environ.get("FLASHJUDGE_SERVER",
                                                           "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("FLASHJUDGE_TOKEN"),
                        help="personal API token (default: $FLASHJUDGE_TOKEN)")
    parser.add_argument("--language", default=None,
                        help="cuda-program, cuda-kernel or c-program (default: from the files)")
    parser.add_argument("--no-wait", action="store_true", help="print the id and return")
    parser.set_defaults(func=run)


def guess_language(sources: list[Path]) -> str:
    """.cu files mean cuda-program (say --language cuda-kernel for a kernel); C/C++ c-program."""
    if any(p.suffix in (".cu", ".cuh") for p in sources):
        return "cuda-program"
    return "c-program"


def upload_limits(client: httpx.Client) -> tuple[int, int]:
    """(max bytes per file, max files) from the server; the defaults if it does not say."""
    try:
        response = client.get("/api/submissions/limits")
        if response.is_success:
            body = response.json()
            return int(body["max_source_bytes"]), int(body["max_files"])
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        pass
    return MAX_FILE_BYTES, MAX_FILES  # the contract's rule, which every server holds


def too_large(sources: list[Path], max_bytes: int, max_files: int) -> str | None:
    """Why the server would refuse these files for their size (None: it would not)."""
    if len(sources) > max_files:
        return f"{len(sources)} files; the server takes at most {max_files}"
    for path in sources:
        size = path.stat().st_size
        if size > max_bytes:
            return (f"{path} has {size} bytes; the server takes at most {max_bytes} bytes "
                    f"per source file")
    return None


def login(client: httpx.Client) -> str:
    username = input("username: ")
    response = client.post("/api/auth/token", data={"username": username,
                                                      "password": getpass.getpass("password: ")})
    check(response)
    return response.json()["access_token"]


class ServerError(Exception):
    """The server refused the request; its message is fit to print."""


def check(response: httpx.Response) -> None:
    if response.is_success:
        return
    try:
        body = response.json()
        detail = body.get("detail", response.text)
    except ValueError:
        detail = response.text[:200]
    raise ServerError(f"{response.status_code}: {detail}")


def events(client: httpx.Client, sub_id: int) -> Iterator[dict[str, Any]]:
    """The submission's states from its SSE stream, until it is done."""
    with client.stream("GET", f"/api/submissions/{sub_id}/events", timeout=None) as response:
        check(response)
        for line in response.iter_lines():
            if line.startswith("data: "):
                yield json.loads(line[6:])


def show_progress(state: dict[str, Any], seen: set[str]) -> None:
    if state["status"] == "queued" and state.get("waiting"):  # no live worker of its language
        console.print(state["waiting"])
    elif state["status"] == "queued" and state.get("queue_position") is not None:
        console.print(f"queued: position {state['queue_position'] + 1}")
    for test in state["tests"]:
        if test["id"] not in seen:
            seen.add(test["id"])
            shown = seconds_text(test["seconds"] or 0)
            console.print(f"  {test['id']}: {test['verdict']}  {shown} s")


def final_table(state: dict[str, Any]) -> Table:
    best = f"/{state['max_score']}" if state.get("max_score") else ""
    title = (f"submission {state['id']}: {state['verdict']}  passed {state['passed']}"
             f"  score {state['score']}{best}  time {state['time'] or 0:.2f} s")
    table = Table(title=title, min_width=len(title) + 4)  # the title on one line
    for column in ("test", "verdict", "seconds", "limit", "max error"):
        table.add_column(column)
    for t in state["tests"]:
        error = "" if t["max_error"] is None else f"{t['max_error']:.2e}"
        table.add_row(t["id"], t["verdict"], seconds_text(t["seconds"] or 0),
                      str(t.get("time_limit") or ""), error)
    return table


def follow(client: httpx.Client, sub_id: int) -> dict[str, Any]:
    seen: set[str] = set()
    last: dict[str, Any] = {}
    for state in events(client, sub_id):
        show_progress(state, seen)
        last = state
    return last


def run(args: argparse.Namespace) -> int:
    missing = [str(p) for p in args.sources if not p.is_file()]
    if missing:
        print(f"flashjudge submit: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    language = args.language or guess_language(args.sources)
    with httpx.Client(base_url=args.server, timeout=60) as client:
        refusal = too_large(args.sources, *upload_limits(client))
        if refusal:
            print(f"flashjudge submit: {refusal}; nothing was sent", file=sys.stderr)
            return 2
        try:
            token = args.token or login(client)
            client.headers["Authorization"] = f"Bearer {token}"
            files = [("files", (p.name, p.read_bytes())) for p in args.sources]
            response = client.post("/api/submissions", data={"language": language}, files=files)
            check(response)
            sub_id = response.json()["id"]
            console.print(f"submitted {language} as #{sub_id} to {args.server}")
            if args.no_wait:
                return 0
            state = follow(client, sub_id)
        except (ServerError, httpx.HTTPError) as exc:
            print(f"flashjudge submit: {exc}", file=sys.stderr)
            return 1
    if state.get("compile", {}).get("log"):
        console.print(state["compile"]["log"])
    console.print(final_table(state))
    return 0 if state.get("verdict") == "AC" else 1
