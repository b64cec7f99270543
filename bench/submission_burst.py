"""A deadline-night burst: many students submit at once; how long until every upload is answered.

    PYTHONPATH=. python bench/submission_burst.py [--students 100] [--each 4] [--repo PATH]
        [--pg postgresql://postgres@127.0.0.1:5432/test] [--client raw|httpx] [--profile PATH]

The deployment of bench/scoreboard_load.py (its own redis-server, a throwaway PostgreSQL schema,
uvicorn as the image runs it, the control worker; no judge worker: the submissions wait in
their queues), with FLASHJUDGE_SUBMIT_INTERVAL_S=0 so one student may send several in a row.
Each of `--students` students (a browser session each) sends `--each` submissions of a small C
program one after another, all students at once, each over its own connection. Prints one
table: the burst's wall time, the answers by status, latency percentiles, the submissions
stored, and the CPU seconds each side spent in the burst (this client, uvicorn, the control
worker) beside the machine's idle share. Everything shares this machine's cores: say so next
to any figure.

The client (`--client raw`, the default) writes a prebuilt multipart body over plain asyncio
sockets, as bench/loadgen.py does for GETs: it shares the two cores with the server it
measures, and httpx.AsyncClient (`--client httpx`, the earlier figures) spent several CPU
seconds of the burst's own.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import httpx
from loadgen import read_response
from rich.console import Console
from rich.table import Table
from scoreboard_load import Deployment, cpu_seconds, deployment, machine_idle
from sqlalchemy import func, select

from app.db.models import Submission
from app.wiring import wired_sessions

SOURCE = b"#include <stdio.h>\nint main(void) { return 0; }\n"
BOUNDARY = "flashjudgeburst0123456789"
Answer = tuple[int | str, float]  # (HTTP status or the transport error's name, seconds)
Student = Callable[[str, str, int], Awaitable[list[Answer]]]  # (url, cookie, each)


def multipart() -> bytes:
    """The form a browser sends: the language, one C file."""
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"language\"\r\n\r\n"
            f"c-program\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"files\"; "
            f"filename=\"hw4.c\"\r\nContent-Type: text/x-csrc\r\n\r\n").encode() + SOURCE + \
        f"\r\n--{BOUNDARY}--\r\n".encode()


def request(url: str, cookie: str) -> bytes:
    """One student's whole POST, headers and body, built once and sent `each` times."""
    body = multipart()
    head = ["POST /api/submissions HTTP/1.1", f"Host: {urlsplit(url).netloc}",
            f"Cookie: {cookie}", "X-CSRF-Token: bench", f"Origin: {url}",
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}",
            f"Content-Length: {len(body)}"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def raw_student(url: str, cookie: str, each: int) -> list[Answer]:
    """One student's submissions in a row over one keep-alive socket: (status, seconds) each."""
    parts = urlsplit(url)
    data, answers = request(url, cookie), []
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        for _ in range(each):
            began = time.perf_counter()
            try:
                writer.write(data)
                status: int | str = (await read_response(reader))[0]
            except (OSError, asyncio.IncompleteReadError) as exc:  # "no answer", by kind
                status = type(exc).__name__
            answers.append((status, time.perf_counter() - began))
    finally:
        writer.close()
    return answers


def httpx_student(client: httpx.AsyncClient) -> Student:
    async def student(url: str, cookie: str, each: int) -> list[Answer]:
        answers: list[Answer] = []
        headers = {"Cookie": cookie, "X-CSRF-Token": "bench", "Origin": url}
        for _ in range(each):
            began = time.perf_counter()
            try:
                reply = await client.post("/api/submissions", headers=headers,
                                          data={"language": "c-program"},
                                          files=[("files", ("hw4.c", SOURCE))])
                status: int | str = reply.status_code
            except httpx.TransportError as exc:
                status = type(exc).__name__
            answers.append((status, time.perf_counter() - began))
        return answers
    return student


async def burst(url: str, cookies: list[str], each: int, kind: str
                ) -> tuple[float, list[Answer]]:
    limits = httpx.Limits(max_connections=len(cookies), max_keepalive_connections=len(cookies))
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:
        student = raw_student if kind == "raw" else httpx_student(client)
        began = time.perf_counter()
        done = await asyncio.gather(*(student(url, c, each) for c in cookies))
        return time.perf_counter() - began, [a for answers in done for a in answers]


def stored(dep: Deployment) -> int:
    with wired_sessions(dep.settings.db_url)() as db:
        return db.scalar(select(func.count()).select_from(Submission)) or 0


def table(args: argparse.Namespace, load: float, seconds: float, answers: list[Answer],
          kept: int, cpu: list[float], idle: float) -> Table:
    statuses = Counter(status for status, _ in answers)
    latencies = sorted(s for _, s in answers)
    out = Table(title=f"{args.students} students x {args.each} submissions at once, "
                      f"{os.cpu_count()} cores shared by all (load {load:.1f} at the start)")
    for column in ("run", "client", "submissions", "wall s", "answers", "p50 ms", "p99 ms",
                   "stored", "CPU s: client / uvicorn / control", "idle %"):
        out.add_column(column, justify="right")
    out.add_row(args.label or "this checkout", args.client, str(len(answers)), f"{seconds:.1f}",
                ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items(), key=str)),
                f"{statistics.median(latencies) * 1000:.0f}",
                f"{latencies[int(0.99 * (len(latencies) - 1))] * 1000:.0f}", str(kept),
                " / ".join(f"{c:.1f}" for c in cpu), f"{idle:.0f}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--each", type=int, default=4, help="submissions per student")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--repo", default=None, help="serve with this checkout's code")
    parser.add_argument("--label", default="")
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw",
                        help="raw: prebuilt bodies over asyncio sockets (cheap); httpx: as before")
    parser.add_argument("--logs", action="store_true", help="print the servers' last log lines")
    parser.add_argument("--profile", default=None, metavar="PATH",
                        help="sample uvicorn with py-spy into PATH (bench/profile_summary.py)")
    args = parser.parse_args()
    setup = argparse.Namespace(students=args.students, pg=args.pg, repo=args.repo,
                               profile=args.profile, logs=args.logs)
    with deployment(setup, {"FLASHJUDGE_SUBMIT_INTERVAL_S": "0"}) as (dep, cookies, _):
        before = stored(dep)
        load = os.getloadavg()[0]
        pids = (os.getpid(), dep.server.pid, dep.control.pid)
        cpu_before, idle_before = [cpu_seconds(p) for p in pids], machine_idle()
        seconds, answers = asyncio.run(burst(dep.url, cookies, args.each, args.client))
        cpu = [cpu_seconds(p) - b for p, b in zip(pids, cpu_before, strict=True)]
        idle_after = machine_idle()
        idle = 100 * (idle_after[0] - idle_before[0]) / max(1, idle_after[1] - idle_before[1])
        kept = stored(dep) - before
    Console(width=200).print(table(args, load, seconds, answers, kept, cpu, idle))


if __name__ == "__main__":
    main()
