"""How long a /metrics scrape takes as the submissions table grows (SQLite, embedded broker).

The collector reads the database on every scrape (the database is the only truth); this prints
whether that stays cheap at course sizes. Run: .venv/bin/python bench/metrics_scrape.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from rich.console import Console
from rich.table import Table

from app.core.config import Settings
from app.db.models import Submission, User
from app.db.session import session_scope
from app.main import create_app

SIZES = (1_000, 10_000, 50_000)
SCRAPES = 5


def add_submissions(db_url: str, user_id: int, count: int) -> None:
    """Finished submissions, as the control worker records them."""
    with session_scope(db_url) as db:
        db.add_all(
            Submission(user_id=user_id, language="cuda-program", suite="hw4", status="done",
                       verdict=("AC", "WA", "TLE")[i % 3], total_time=1.0 + i % 40,
                       result={"worker": {"hostname": f"gpu{i % 8}-1", "gpu": "H100",
                                          "seconds": 2.0 + i % 50}, "overhead_s": 0.4})
            for i in range(count)
        )


def scrape_seconds(client: TestClient) -> list[float]:
    times = []
    for _ in range(SCRAPES):
        start = time.perf_counter()
        assert client.get("/metrics").status_code == 200
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    table = Table(title=f"/metrics scrape time (median and max of {SCRAPES})")
    for column in ("submissions", "median ms", "max ms"):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(environment="test", secret_key="bench-only", data_dir=Path(tmp),
                            sweep_interval_s=0, migrate_on_start=True)
        with TestClient(create_app(settings)) as client:
            with session_scope(settings.db_url) as db:
                user = User(username="bench", role="student")
                db.add(user)
                db.flush()
                user_id = user.id
            total = 0
            for size in SIZES:
                add_submissions(settings.db_url, user_id, size - total)
                total = size
                times = scrape_seconds(client)
                table.add_row(f"{size:,}", f"{statistics.median(times) * 1e3:.0f}",
                              f"{max(times) * 1e3:.0f}")
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
