"""A custom run's upload, read from the request's stream straight into its own files.

Starlette's form parser spooled every part to the temp dir before the route ran (a refused
1.2 GB upload grew /tmp by 2.29 GB; the route then copied it again). Here the multipart parts
`input` and `output` are written as they arrive into a scratch dir, each stopped the moment it
passes its size: the input at 12 bytes until its header is read, then at exactly the size the
header announces (and at `max_input_bytes`); the output at 4*B*N*d. Nothing past a limit is
ever written; the caller deletes the scratch dir on any error. Before the bytes written pass
what the upload's reservation holds, `grow` is asked for more (app/custom_runs/quota.py), so
disk is held as the body arrives.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request

if TYPE_CHECKING:  # a TypedDict the library defines for type checkers only
    from python_multipart.multipart import MultipartCallbacks

from app.core.errors import UserError
from kernels.fileformat import HEADER_BYTES, FormatError, InputHeader, check_size, parse_header

FLUSH_BYTES = 1 << 20  # body bytes handed to the parser (in a thread) at a time
FILES = {"input": "input.bin", "output": "own.bin"}  # form field -> file in the run's folder


@dataclass
class Received:
    """What the upload held, once every byte is written and checked against its limit."""

    header: InputHeader | None = None  # the input's header (None: no input part came)
    sizes: dict[str, int] = field(default_factory=dict)  # form field -> bytes written


class PartWriter:
    """python-multipart callbacks writing the known parts into `folder`, each within its cap."""

    def __init__(self, folder: Path, max_input_bytes: int, held: int = 0,
                 grow: Callable[[int], int] | None = None) -> None:
        self.folder, self.max_input = folder, max_input_bytes
        self.held, self.grow = held, grow  # bytes the reservation holds; asks it to hold more
        self.received = Received()
        self.name: str | None = None  # the form field of the part being read
        self.out: BinaryIO | None = None  # its file (None: a part we ignore)
        self.head = b""  # the input's first bytes, until its header is read
        self.header_field, self.header_value = b"", b""

    def callbacks(self) -> MultipartCallbacks:
        return {"on_part_begin": self.begin, "on_header_field": self.on_field,
                "on_header_value": self.on_value, "on_header_end": self.header_end,
                "on_headers_finished": self.open, "on_part_data": self.data,
                "on_part_end": self.end}

    def begin(self) -> None:
        self.name, self.header_field, self.header_value = None, b"", b""

    def on_field(self, data: bytes, start: int, end: int) -> None:
        self.header_field += data[start:end]

    def on_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def header_end(self) -> None:
        if self.header_field.lower() == b"content-disposition":
            _, options = parse_options_header(self.header_value)
            self.name = options.get(b"name", b"").decode("latin-1")
        self.header_field, self.header_value = b"", b""

    def open(self) -> None:
        if self.name in FILES and self.name not in self.received.sizes:
            self.out = (self.folder / FILES[self.name]).open("wb")
            self.received.sizes[self.name] = 0

    def data(self, data: bytes, start: int, end: int) -> None:
        if self.out is None or self.name is None:
            return
        chunk = data[start:end]
        size = self.received.sizes[self.name] + len(chunk)
        if self.name == "input":
            self.read_header(chunk, size)
        if size > self.cap(self.name):
            self.refuse(self.name, size)
        self.hold(sum(self.received.sizes.values()) + len(chunk))
        self.out.write(chunk)
        self.received.sizes[self.name] = size

    def hold(self, total: int) -> None:
        """Have the reservation hold `total` bytes of files before they are written."""
        if self.grow is not None and total > self.held:
            self.held = self.grow(total)

    def read_header(self, chunk: bytes, size: int) -> None:
        """The input's header, as soon as its 12 bytes are in: from then on its exact size."""
        if self.received.header is not None or size < HEADER_BYTES:
            self.head += chunk
            return
        head = (self.head + chunk)[:HEADER_BYTES]
        try:
            self.received.header = parse_header(head)
        except FormatError as exc:
            raise UserError(f"input file: {exc}", field=exc.field) from exc
        if self.received.header.input_bytes > self.max_input:
            raise UserError(f"input file: its header announces "
                            f"{self.received.header.input_bytes} bytes; at most "
                            f"{self.max_input} are accepted", status=413, field="input")

    def cap(self, name: str) -> int:
        """The most bytes the part may have, from what is known of the input so far."""
        header = self.received.header
        if name == "input":
            return header.input_bytes if header else HEADER_BYTES
        return header.output_bytes if header else self.max_input // 3 + 4

    def refuse(self, name: str, size: int) -> None:
        """A part passed its size: the error, before its bytes are written."""
        header = self.received.header
        if name == "input" and header is not None:
            try:
                check_size(header, size)
            except FormatError as exc:
                raise UserError(f"input file: {exc}", field=exc.field) from exc
        expected = f"B*N*d*4 = {header.output_bytes}" if header else \
            f"at most {self.cap(name)}"
        raise UserError(f"your output has more bytes than its input's shape allows ({expected})",
                        field="output")

    def end(self) -> None:
        """Close the part's file; an empty one is no file at all (a browser sends a file input
        left empty, "Your output (optional)", as a part without bytes)."""
        if self.out is not None:
            self.out.close()
            if self.name is not None and self.received.sizes.get(self.name) == 0:
                del self.received.sizes[self.name]
                (self.folder / FILES[self.name]).unlink()
        self.out, self.name = None, None

    def close(self) -> None:
        self.end()


def boundary_of(content_type: str) -> bytes:
    kind, options = parse_options_header(content_type)
    boundary = options.get(b"boundary", b"")
    if kind != b"multipart/form-data" or not boundary:
        raise UserError("send the files as multipart/form-data (fields input and output)",
                        status=415, field="input")
    return boundary


async def receive(request: Request, folder: Path, max_input_bytes: int,
                  drain_bytes: int, held: int = 0,
                  grow: Callable[[int], int] | None = None) -> Received:
    """Stream the request's body into `folder`; raises UserError at the first byte too many
    (or when `grow` refuses more disk), after reading and dropping up to `drain_bytes` more (a
    client still sending then reads the answer instead of a connection reset; nothing of it is
    written)."""
    writer = PartWriter(folder, max_input_bytes, held, grow)
    parser = MultipartParser(boundary_of(request.headers.get("content-type", "")),
                             writer.callbacks())
    stream = request.stream()
    try:
        await write_all(stream, parser)
    except UserError:
        await drain(stream, drain_bytes)
        raise
    finally:
        writer.close()
    return writer.received


async def write_all(stream: AsyncIterator[bytes], parser: MultipartParser) -> None:
    """Feed the parser (its callbacks write the files) in threads, a megabyte at a time."""
    pending = bytearray()
    async for chunk in stream:
        pending += chunk
        if len(pending) >= FLUSH_BYTES:
            await run_in_threadpool(parser.write, bytes(pending))
            pending.clear()
    await run_in_threadpool(parser.write, bytes(pending))
    parser.finalize()


async def drain(stream: AsyncIterator[bytes], budget: int) -> None:
    dropped = 0
    with contextlib.suppress(ClientDisconnect):
        async for chunk in stream:
            dropped += len(chunk)
            if dropped > budget:
                return
