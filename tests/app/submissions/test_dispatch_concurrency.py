"""Sends and revokes from many request threads at once (a deadline-night burst) all get through."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.config import Settings
from app.submissions import dispatch

THREADS = 40  # the API's thread pool
HANG_BOUND_S = 120  # far beyond what the revokes take; only a hang reaches it


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Threads switch as often as they can: the interleavings of a loaded two-core server."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_many_uploads_revoking_at_once_do_not_hang_on_the_broker_pool(redis_url: str,
                                                                      tmp_path: Path,
                                                                      busy_switching: None):
    """Celery's broadcast holds a pooled broker connection while it takes a second to publish;
    ten threads at once used to hold all ten and wait for ever."""
    settings = Settings(environment="test", secret_key="x", data_dir=tmp_path,
                        broker_url=redis_url)
    start = threading.Barrier(THREADS)

    def supersede_often(i: int) -> None:
        start.wait()
        for k in range(20):
            dispatch.revoke([f"task-{i}-{k}"], settings)

    threads = [threading.Thread(target=supersede_often, args=(i,), daemon=True)
               for i in range(THREADS)]
    for thread in threads:
        thread.start()
    until = time.monotonic() + HANG_BOUND_S
    for thread in threads:
        thread.join(max(0.0, until - time.monotonic()))
    assert not [t for t in threads if t.is_alive()], "revokes stuck waiting for the broker"
