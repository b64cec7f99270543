#!/usr/bin/env python3
"""Container healthchecks, exit status 0 (healthy) or 1 (not), one line on stdout saying why.

    flashjudge-healthcheck http URL   the URL answers with a status below 500
    flashjudge-healthcheck worker     a Celery worker of *this* container answers a ping

Why a script: a worker container runs one Celery process per GPU, and `celery inspect ping` alone
would be satisfied by any worker in the cluster; this one only counts nodes named after this
container's hostname. It talks to the broker only, so GPU workers need no other credentials.
"""

from __future__ import annotations

import os
import socket
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass


@dataclass(frozen=True)
class Health:
    ok: bool  # healthy?
    why: str  # one line for `docker inspect`'s health log


def check_http(url: str, timeout_s: float = 4.0) -> Health:
    """Alive when the server answers at all below 500 (Flower answers 401 behind basic auth)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return Health(True, f"{url}: {response.status}")
    except urllib.error.HTTPError as exc:
        return Health(exc.code < 500, f"{url}: {exc.code}")
    except OSError as exc:
        return Health(False, f"{url}: {exc}")


def check_worker() -> Health:
    """Healthy when a Celery node named `...@<this hostname>` answers a broadcast ping.

    The ping waits its whole timeout (it cannot know how many workers will answer):
    FLASHJUDGE_HEALTHCHECK_TIMEOUT_S, 5 s by default, must stay below compose's timeout.
    """
    from celery import Celery  # only the worker mode needs Celery

    timeout_s = float(os.environ.get("FLASHJUDGE_HEALTHCHECK_TIMEOUT_S", "5"))
    broker = os.environ.get("FLASHJUDGE_BROKER_URL")
    if not broker:
        return Health(False, "FLASHJUDGE_BROKER_URL is not set")
    client = Celery("flashjudge-healthcheck", broker=broker)
    try:
        replies = client.control.ping(timeout=timeout_s)
    except Exception as exc:  # noqa: BLE001  any broker failure means unhealthy
        return Health(False, f"broker: {exc}")
    host = socket.gethostname()
    mine = [name for reply in replies for name in reply if name.split("@", 1)[-1] == host]
    names = ", ".join(mine) or "none"
    return Health(bool(mine), f"{len(mine)} worker(s) of {host} answered: {names}")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "http":
        health = check_http(argv[1])
    elif argv == ["worker"]:
        health = check_worker()
    else:
        print(__doc__)
        return 2
    print(health.why)
    return 0 if health.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
