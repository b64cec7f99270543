"""`flashjudge submit SOURCE... --server URL [--assignment NAME]`: submit, follow the judging
live, print the table. Without --assignment the upload goes to the only open assignment.

Authenticates with a personal API token (--token or FLASHJUDGE_TOKEN), or, in a terminal, asks for
a username and password and uses the OAuth2 password flow. Progress comes from the submission's SSE
stream; a stream cut short (the API restarted) is opened again, and the final table is always the
submission as the API reads it at the end, never the last partial update.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from flashjudge.contract import MAX_FILE_BYTES, MAX_FILES
from flashjudge.timefmt import seconds_text
from flashjudge_cli import device

console = Console()
RECONNECT_S = 300.0  # how long a lost stream is tried again before giving up (the judging goes on)
STREAM_TIMEOUT = httpx.Timeout(10.0, read=60.0)  # the server sends a keepalive every 15 s


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("submit", help="submit sources to a flashjudge server")
    parser.add_argument("sources", nargs="+", type=Path, metavar="SOURCE")
    parser.add_argument("--server", default=os.environ.get("FLASHJUDGE_SERVER",
                                                           "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("FLASHJUDGE_TOKEN"),
                        help="personal API token (default: $FLASHJUDGE_TOKEN)")
    parser.add_argument("--language", default=None,
                        help="cuda-program, cuda-kernel, triton-kernel or c-program "
                             "(default: from the files)")
    parser.add_argument("--assignment", default=os.environ.get("FLASHJUDGE_ASSIGNMENT"),
                        help="the assignment to submit to, e.g. hw4 (default: the only open "
                             "one; the server names them when several are open)")
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
    except httpx.ConnectError:
        raise  # nothing answers there: the caller says so, naming the URL
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


def no_token(server: str) -> str | None:
    """Why no login can happen (no token and no terminal to ask in), or None."""
    if sys.stdin is not None and sys.stdin.isatty():
        return None
    return (f"no API token and no terminal to ask for a password: make a token on "
            f"{server.rstrip('/')}/account and set FLASHJUDGE_TOKEN (or pass --token)")


def unreachable(server: str, exc: Exception) -> str:
    return (f"cannot reach the flashjudge server at {server} ({exc}); pass --server URL or set "
            f"FLASHJUDGE_SERVER, e.g. --server http://judge.example.edu:8000")


def login(client: httpx.Client) -> str:
    """A token for the username and password typed; this machine's known-device cookie goes
    with it and is kept, so nobody else's guessing slows its owner here."""
    username = input("username: ")
    device.load(client)
    response = client.post("/api/auth/token", data={"username": username,
                                                      "password": getpass.getpass("password: ")})
    check(response)
    device.keep(response)
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
    """The submission's states from its SSE stream, until it is done or the stream ends."""
    with client.stream("GET", f"/api/submissions/{sub_id}/events",
                       timeout=STREAM_TIMEOUT) as response:
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
            shown = seconds_text(test["seconds"])  # None: hidden until the due time
            console.print(f"  {test['id']}: {test['verdict']}" + (f"  {shown} s" if shown else ""))


def final_table(state: dict[str, Any]) -> Table:
    """The table of a submission's state; what a state lacks is left blank, never a KeyError.
    A whole-program result with a start-up floor gets a column of each time above it, and a
    caption with the floor in total (ranks use the whole time: docs/homework.md)."""
    best = f"/{state['max_score']}" if state.get("max_score") else ""
    title = (f"submission {state.get('id', '?')}: {state.get('verdict') or state.get('status')}"
             f"  passed {state.get('passed')}  score {state.get('score')}{best}"
             + ("" if state.get("time") is None else f"  time {state['time']:.2f} s"))
    floor = state.get("floor") or {}
    floored = bool(floor) and not floor.get("error")
    caption = floor_caption(floor)
    table = Table(title=title, caption=caption,  # each on one line
                  min_width=max(len(title), len(caption or "")) + 4)
    columns = ("test", "verdict", "seconds", "above start-up", "limit", "max error")
    for column in columns if floored else [c for c in columns if c != "above start-up"]:
        table.add_column(column)
    for t in state.get("tests") or []:
        error = "" if t.get("max_error") is None else f"{t['max_error']:.2e}"
        above = [seconds_text(t.get("above_floor_s"))] if floored else []
        table.add_row(t.get("id", ""), t.get("verdict") or "", seconds_text(t.get("seconds")),
                      *above, str(t.get("time_limit") or ""), error)
    return table


def mistake_lines(state: dict[str, Any]) -> list[str]:
    """"t06: your output equals attention without the 1/sqrt(d) scale (...)": the classic
    mistake each wrong test's output matches, when the judge named one (docs/mistakes.md)."""
    return [f"{t.get('id', '?')}: {t['mistake']['line']}" for t in state.get("tests") or []
            if isinstance(t.get("mistake"), dict) and t["mistake"].get("line")]


def floor_caption(floor: dict[str, Any]) -> str | None:
    """One line on the start-up floor in total (None: the result has none)."""
    if floor.get("total_s") is None or floor.get("above_s") is None:
        return None
    return (f"start-up floor {seconds_text(floor['total_s'])} s, "
            f"{seconds_text(floor['above_s'])} s above it; ranks use the whole time")


def final_state(client: httpx.Client, sub_id: int) -> dict[str, Any]:
    """The submission as the API reads it now: every test, whatever the stream last sent."""
    response = client.get(f"/api/submissions/{sub_id}")
    check(response)
    return response.json()


def follow(client: httpx.Client, sub_id: int, server: str) -> dict[str, Any]:
    """Show progress until the submission is done, opening the stream again when it is cut
    (an API restart, a proxy), for up to RECONNECT_S without an answer; then its final state."""
    seen: set[str] = set()
    given_up_at, wait = time.monotonic() + RECONNECT_S, 1.0
    while True:
        try:
            for state in events(client, sub_id):
                show_progress(state, seen)
                given_up_at, wait = time.monotonic() + RECONNECT_S, 1.0
                if state.get("status") == "done":
                    return final_state(client, sub_id)
            reason = "the server ended the stream"
        except httpx.TransportError as exc:  # refused, reset, timed out
            reason = str(exc) or type(exc).__name__
        if time.monotonic() > given_up_at:
            raise ServerError(f"lost {server} ({reason}) and could not reconnect for "
                              f"{RECONNECT_S:g} s; the judging goes on: see submission {sub_id} "
                              f"on {server.rstrip('/')}/submissions/{sub_id}")
        console.print(f"lost the live stream from {server} ({reason}); reconnecting...")
        time.sleep(wait)
        wait = min(wait * 2, 10.0)


def local_refusal(args: argparse.Namespace) -> str | None:
    """What stops the command before it talks to the server: missing files, no way to log in."""
    missing = [str(p) for p in args.sources if not p.is_file()]
    if missing:
        return f"no such file: {', '.join(missing)}"
    return None if args.token else no_token(args.server)


def announcements(client: httpx.Client) -> list[dict[str, Any]]:
    """The TAs' current announcements for this user; none from a server that has none to give
    (an older one, a hiccup): they must never stop a submission."""
    try:
        response = client.get("/api/announcements")
        body = response.json() if response.is_success else []
    except (httpx.HTTPError, ValueError):
        return []
    return [a for a in body if isinstance(a, dict)] if isinstance(body, list) else []


def show_announcements(items: list[dict[str, Any]]) -> None:
    """Each announcement as a boxed note, before anything else the command prints."""
    for item in items:
        console.print(Panel(Text(str(item.get("body") or "")), title=Text(
            f"Announcement: {item.get('title', '')}", style="bold"), title_align="left",
            expand=False))


def submit(client: httpx.Client, args: argparse.Namespace, language: str) -> int:
    """Log in if needed, upload, follow the judging; the final table's exit code (0 for AC).
    The TAs' announcements come first."""
    token = args.token or login(client)
    client.headers["Authorization"] = f"Bearer {token}"
    show_announcements(announcements(client))
    files = [("files", (p.name, p.read_bytes())) for p in args.sources]
    data = {"language": language} | ({"assignment": args.assignment} if args.assignment else {})
    response = client.post("/api/submissions", data=data, files=files)
    check(response)
    sub_id = response.json()["id"]
    to = f"{args.assignment} on " if args.assignment else ""
    console.print(f"submitted {language} as #{sub_id} to {to}{args.server}")
    if args.no_wait:
        return 0
    state = follow(client, sub_id, args.server)
    if state.get("compile", {}).get("log"):
        console.print(state["compile"]["log"])
    console.print(final_table(state))
    for line in mistake_lines(state):
        console.print(line, highlight=False, markup=False)
    return 0 if state.get("verdict") == "AC" else 1


def run(args: argparse.Namespace) -> int:
    refusal = local_refusal(args)
    if refusal:
        print(f"flashjudge submit: {refusal}", file=sys.stderr)
        return 2
    with httpx.Client(base_url=args.server, timeout=60) as client:
        try:
            refusal = too_large(args.sources, *upload_limits(client))
        except httpx.ConnectError as exc:
            print(f"flashjudge submit: {unreachable(args.server, exc)}", file=sys.stderr)
            return 2
        if refusal:
            print(f"flashjudge submit: {refusal}; nothing was sent", file=sys.stderr)
            return 2
        try:
            return submit(client, args, args.language or guess_language(args.sources))
        except (ServerError, httpx.HTTPError, EOFError) as exc:
            print(f"flashjudge submit: {exc}", file=sys.stderr)
            return 1
