"""Built products kept for the timing refinement: the verdict pass's build reused, not redone.

The refinement of a judged submission runs its passed tests again (worker/timing/refine.py) on a
worker of the same node, usually within minutes. Building it again cost an nvcc run, seconds of
a GPU worker's time per submission that ran nothing on the GPU, and measured a second build of
the program rather than the one judged. So a successful build's product is kept, under a key of
everything the build depends on (language, files, GPU architecture, accepted architectures,
extra flags), in a judge-owned directory beside the work dirs (mode 0700: the sandbox never sees
it), the `keep` most recent only. The refinement takes a copy into its own artifacts directory;
anything missing or unreadable is simply built again. The verdict pass itself always builds (the
build log and compile errors are the student's).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from worker.running.plan import BuildSettings
from worker.sandbox.workspace import scratch_root

KEEP = 32  # products kept (a hw4 binary is a few MB at most)


def product_key(language: str, files: Mapping[str, bytes], settings: BuildSettings) -> str:
    """What one build depends on, hashed."""
    digest = hashlib.sha256()
    for part in (language, settings.gpu_arch, ",".join(sorted(settings.supported_archs)),
                 " ".join(settings.nvcc_flags)):
        digest.update(part.encode() + b"\0")
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return digest.hexdigest()[:32]


class ProductCache:
    """Products of successful builds, by key; shared by the worker processes of one machine."""

    def __init__(self, root: Path, keep: int = KEEP) -> None:
        self.dir = root / "flashjudge-products"
        self.keep = keep

    @classmethod
    def beside(cls, scratch: Path | None) -> ProductCache:
        """The cache beside the work dirs made under `scratch` (None: scratch_root())."""
        return cls(scratch or scratch_root())

    def put(self, key: str, product: Path) -> None:
        """Keep a copy of `product` under `key` (complete before it appears), then trim."""
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.dir.chmod(0o700)
        handle, partial = tempfile.mkstemp(prefix=".partial-", dir=self.dir)
        os.close(handle)
        shutil.copyfile(product, partial)
        os.chmod(partial, 0o700)
        os.replace(partial, self.dir / key)
        self._trim()

    def get(self, key: str, into: Path) -> bool:
        """Copy the product kept under `key` to `into`; False when there is none."""
        kept = self.dir / key
        try:
            shutil.copyfile(kept, into)
            os.utime(kept)  # recently used: trimmed last
        except OSError:
            return False
        into.chmod(0o755)
        return True

    def _trim(self) -> None:
        entries = []
        for path in self.dir.iterdir():
            if path.name.startswith("."):
                continue  # another worker's copy in progress
            try:
                entries.append((path.stat().st_mtime, path))
            except FileNotFoundError:
                continue  # another worker trimmed it meanwhile
        for _, path in sorted(entries, reverse=True)[self.keep:]:
            path.unlink(missing_ok=True)
