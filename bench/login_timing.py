"""How long a wrong password takes to be refused, by kind of account: an
account with a password, an unknown name, an account that has only a sign-in link. Equal
medians mean the time tells an attacker nothing about which accounts have a password.

Runs the checkout's app in process (FastAPI's TestClient, SQLite in a temp dir), so running it
from another checkout (PYTHONPATH=/path/to/other) compares two versions of the code.

    PYTHONPATH=. .venv/bin/python bench/login_timing.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from rich.console import Console
from rich.table import Table

from app.accounts import users
from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.session import session_scope
from app.main import create_app

KINDS = {"has a password": "withpw", "unknown name": "nosuchuser",
         "sign-in link only": "linkonly"}


def timed_refusals(client: TestClient, username: str, repeats: int) -> list[float]:
    """Milliseconds per wrong-password answer, each from its own address (no throttling)."""
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        response = client.post("/api/auth/token", data={"username": username, "password": "x"},
                               headers={"X-Forwarded-For": f"10.{i // 250}.{i % 250}.9"})
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 401, response.text
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(environment="test", secret_key="bench-secret", data_dir=Path(data),
                            sweep_interval_s=0, suite="hw4-mini", trusted_proxies="*",
                            login_max_failures=10**6, login_max_failures_per_address=10**6,
                            login_user_failures=10**6)
        upgrade(settings.db_url)
        with session_scope(settings.db_url) as db:
            users.add_user(db, "withpw", "student", "a long bench passphrase")
            users.add_user(db, "linkonly", "student", None)
        table = Table(title=f"wrong password, {args.repeats} tries each (ms)")
        for column in ("account", "median", "p10", "p90"):
            table.add_column(column)
        with TestClient(create_app(settings)) as client:
            logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request
            timed_refusals(client, "withpw", 3)  # warm-up: imports, the first hash
            for label, username in KINDS.items():
                times = sorted(timed_refusals(client, username, args.repeats))
                deciles = statistics.quantiles(times, n=10)
                table.add_row(label, f"{statistics.median(times):.0f}", f"{deciles[0]:.0f}",
                              f"{deciles[-1]:.0f}")
        Console().print(table)


if __name__ == "__main__":
    main()
