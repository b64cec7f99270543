"""A fresh work dir with the judge's files laid out in it: the one way every run gets its /work.

Tests, kernel-harness runs, sanitizer runs and ncu runs all need the same thing: a new directory
(on tmpfs), judge-owned files copied in as executables (never linked: the submission may not
touch the originals), and the directory gone afterwards whatever the program left in it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from worker.sandbox.workspace import make_workdir, remove_tree


@contextmanager
def fresh_workdir(prefix: str, files: Mapping[str, Path],
                  discard: Callable[[Path], None] = remove_tree,
                  scratch: Path | None = None) -> Iterator[Path]:
    """A new work dir under `scratch` (Machine.scratch; None: scratch_root()) holding copies of
    `files` (name in /work -> judge-owned source, mode 0755); handed to `discard` on the way out
    (default: removed at once)."""
    workdir = make_workdir(prefix, scratch)
    try:
        for name, source in files.items():
            shutil.copyfile(source, workdir / name)
            (workdir / name).chmod(0o755)
        yield workdir
    finally:
        discard(workdir)
