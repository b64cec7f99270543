"""One BLAS thread while the catalogue runs: its products are small (a few rows against N keys),
and OpenBLAS's threads spin while they wait. On a loaded 2-core machine that spinning made the
catalogue cost 1.5-2 s of CPU per failing test instead of 0.3 s (bench/mistake_catalogue.py).

numpy's own OpenBLAS is found among the loaded libraries and its thread count set for the
duration, then put back (threadpoolctl does the same; the judge's nodes do not install it). Where
no OpenBLAS is found (another BLAS), nothing changes."""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import numpy as np  # noqa: F401 - loads the BLAS this module looks for

PREFIXES = ("scipy_openblas", "openblas")  # numpy's wheels, then a system OpenBLAS
SUFFIXES = ("64_", "")
_lock = threading.Lock()


@cache
def openblas() -> tuple[Any, Any] | None:
    """(get, set) of the loaded OpenBLAS's thread count, or None."""
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if "openblas" in line.lower()
                            and line.split()[-1].startswith("/")})
    except OSError:
        return None
    for path in paths:
        lib = ctypes.CDLL(path)
        for prefix in PREFIXES:
            for suffix in SUFFIXES:
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    return get, put
    return None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside the block (for this process), as it was after it."""
    found = openblas()
    if found is None:
        yield
        return
    get, put = found
    with _lock:
        before = int(get())
        put(1)
        try:
            yield
        finally:
            put(before)
