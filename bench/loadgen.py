"""A small open-loop HTTP/1.1 load generator for loopback benchmarks (asyncio, keep-alive).

Requests are sent at a fixed rate whatever the server does: request i is due at start + i/rate,
and its latency counts from that due time, so a server that falls behind shows it in the
percentiles instead of slowing the client down (no coordinated omission). Each client is one
keep-alive connection with its own credentials and, optionally, the ETag of its last 200 sent
back as If-None-Match, as a browser tab's conditional refetch would. Plain sockets rather than
an HTTP library: the client shares the machine's cores with the server being measured, so it
must cost little per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Client:
    """One simulated browser tab or script: a connection, its headers, its last ETag."""

    headers: dict[str, str]  # e.g. Authorization or Cookie
    etag: str | None = None  # sent as If-None-Match when conditional
    reader: asyncio.StreamReader | None = None
    writer: asyncio.StreamWriter | None = None


@dataclass
class Outcome:
    """What a run measured."""

    latencies_s: list[float] = field(default_factory=list)  # from each request's due time
    answered_at: list[float] = field(default_factory=list)  # perf_counter of each answer
    statuses: Counter[int] = field(default_factory=Counter)
    errors: int = 0  # connections that failed mid-request
    unanswered: int = 0  # still waiting when the run's grace time was over
    elapsed_s: float = 0.0  # first due time to last answer
    body_bytes: dict[int, int] = field(default_factory=dict)  # status -> bytes received
    builds_ms: list[tuple[float, float]] = field(default_factory=list)  # Server-Timing: a
    # build's (wall, CPU) in the server, on the responses that paid for one

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies_s)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")

    def slow_seconds(self, over_s: float) -> list[tuple[float, int]]:
        """(second of the run, answers slower than `over_s` in it) for the seconds that had
        any: whether a tail is spread out or a few stalls."""
        if not self.answered_at:
            return []
        start = min(self.answered_at)
        slow = Counter(int(at - start) for at, took in zip(self.answered_at, self.latencies_s,
                                                          strict=True) if took > over_s)
        return sorted(slow.items())

    @property
    def achieved(self) -> float:
        return len(self.latencies_s) / self.elapsed_s if self.elapsed_s else 0.0


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """Status, lower-cased headers and body of one response (Content-Length or chunked)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        return status, headers, await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding") == "chunked":
        body = bytearray()
        while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
            body += await reader.readexactly(size)
            await reader.readexactly(2)
        await reader.readexactly(2)
        return status, headers, bytes(body)
    return status, headers, b""


def request_bytes(path: str, client: Client, conditional: bool) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{k}: {v}" for k, v in client.headers.items()]
    if conditional and client.etag:
        lines.append(f"If-None-Match: {client.etag}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def one(host: str, port: int, path: str, client: Client, conditional: bool,
              due: float, outcome: Outcome) -> None:
    try:
        if client.writer is None:
            client.reader, client.writer = await asyncio.open_connection(host, port)
        assert client.reader is not None
        client.writer.write(request_bytes(path, client, conditional))
        status, headers, body = await read_response(client.reader)
    except (OSError, asyncio.IncompleteReadError, ValueError):
        outcome.errors += 1
        client.writer = None
        return
    now = time.perf_counter()
    outcome.latencies_s.append(now - due)
    outcome.answered_at.append(now)
    outcome.statuses[status] += 1
    outcome.body_bytes[status] = outcome.body_bytes.get(status, 0) + len(body)
    if status == 200 and "etag" in headers:
        client.etag = headers["etag"]
    if "server-timing" in headers:
        outcome.builds_ms.append(server_timing(headers["server-timing"]))


def server_timing(value: str) -> tuple[float, float]:
    """(rebuild, rebuild-cpu) milliseconds of a Server-Timing header."""
    found = {}
    for metric in value.split(","):
        name, _, rest = metric.strip().partition(";")
        if rest.startswith("dur="):
            found[name] = float(rest[4:])
    return found.get("rebuild", 0.0), found.get("rebuild-cpu", 0.0)


async def run_at_rate(host: str, port: int, path: str, clients: list[Client], rate: float,
                      seconds: float, conditional: bool, grace_s: float = 15.0) -> Outcome:
    """`rate` requests per second for `seconds`, round-robin over the clients; a client still
    waiting for its previous answer makes the next due request wait (its latency grows).
    Requests still unanswered `grace_s` after the last one was due are counted and dropped."""
    outcome = Outcome()
    busy: dict[int, asyncio.Task[None]] = {}
    start = time.perf_counter() + 0.05
    total = int(rate * seconds)
    for i in range(total):
        due = start + i / rate
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        k = i % len(clients)
        previous = busy.get(k)
        if previous is not None and not previous.done():
            busy[k] = asyncio.ensure_future(_after(previous, host, port, path, clients[k],
                                                   conditional, due, outcome))
        else:
            busy[k] = asyncio.ensure_future(one(host, port, path, clients[k], conditional, due,
                                                outcome))
    pending = [t for t in busy.values() if not t.done()]
    if pending:
        await asyncio.wait(pending, timeout=grace_s)
    for k, task in busy.items():
        if not task.done():
            task.cancel()
            client = clients[k]
            if client.writer is not None:  # mid-response: the next run opens a new one
                client.writer.close()
                client.writer = None
    outcome.unanswered = total - len(outcome.latencies_s) - outcome.errors
    outcome.elapsed_s = time.perf_counter() - start
    return outcome


async def _after(previous: asyncio.Task[None], host: str, port: int, path: str, client: Client,
                 conditional: bool, due: float, outcome: Outcome) -> None:
    await previous
    await one(host, port, path, client, conditional, due, outcome)


async def close(clients: list[Client]) -> None:
    for client in clients:
        if client.writer is not None:
            client.writer.close()
            with contextlib.suppress(OSError):
                await client.writer.wait_closed()
            client.writer = None


@dataclass
class Streams:
    """Open event streams held alongside the load, counting the events they receive."""

    opened: int = 0
    refused: int = 0
    events: int = 0
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


async def hold_stream(host: str, port: int, path: str, headers: dict[str, str],
                      streams: Streams) -> None:
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(request_bytes(path, Client(headers), False))
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            streams.refused += 1
            writer.close()
            return
        streams.opened += 1
        while line := await reader.readline():
            streams.events += line.startswith(b"event:")
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        streams.refused += 1


async def open_streams(host: str, port: int, path: str, headers: list[dict[str, str]],
                       count: int) -> Streams:
    streams = Streams()
    for i in range(count):
        streams.tasks.append(asyncio.ensure_future(
            hold_stream(host, port, path, headers[i % len(headers)], streams)))
        if i % 50 == 49:
            await asyncio.sleep(0.05)  # do not open 500 connections in one instant
    return streams


async def close_streams(streams: Streams) -> None:
    for task in streams.tasks:
        task.cancel()
    await asyncio.gather(*streams.tasks, return_exceptions=True)
