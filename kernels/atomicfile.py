"""Write a file so that it appears whole or not at all.

A reference output or a generated input is streamed over seconds; if the process is killed half way,
a half-written file under the final name would look complete to the next run (the cache checks
existence and size). Writing to a temporary name in the same directory and renaming at the end makes
the final name appear only when the content is complete.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Yield a binary file; on success it is renamed to `path`, on any error it is removed."""
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(final)
    try:
        with open(tmp, "wb") as f:
            yield f
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)


def temporary_name(final: Path) -> Path:
    """A hidden sibling name no other process or thread will pick (same directory: rename works)."""
    return final.with_name(f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
