"""The TAs' similarity page at course scale, through the service: 300 students x 10 submissions.

    PYTHONPATH=. python bench/similarity_page.py [--students 300] [--submissions 10]
        [--database-url URL]

Builds a database (SQLite under a temporary folder, or the PostgreSQL URL given) with a synthetic
course (the sources of bench/similarity_course.py: variants of a few solutions, planted copies),
each submission judged and fingerprinted by the control side's own function as it arrives, plus
the starter code as base and last year's solution as a public source. Then times, through the
real app (TestClient: routing, database, template): the first page of a fresh process (the index
built from the stored fingerprints), the page again (nothing changed), the page after one new
submission (incremental), the JSON API, and one pair side by side. Prints a table.
"""

from __future__ import annotations

import argparse
import logging
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from rich.console import Console
from rich.table import Table
from similarity_course import STARTER, CodeGen, Student, edit, make_class, plant_copies, render
from similarity_course import starter_io as course_io
from sqlalchemy.orm import Session

from app.accounts import users
from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.models import SimilaritySource, Submission, SubmissionFile, User
from app.main import create_app
from app.similarity import fingerprinting
from app.wiring import wired_sessions
from flashjudge.contract import FingerprintPayload


def store(db: Session, user_id: int, text: str, passed: int, rng: random.Random) -> int:
    """A judged submission, stored as the recorder leaves it."""
    sub = Submission(user_id=user_id, language="cuda-program", suite="hw4", status="done",
                     verdict="AC" if passed == 30 else "WA", passed=passed,
                     score=max(0, 60 - 3 * (30 - passed)), total_time=rng.uniform(5, 60),
                     attempt=1, compile_log="", error="")
    sub.files = [SubmissionFile(name="hw4.cu", content=text.encode())]
    db.add(sub)
    db.commit()
    return sub.id


def fingerprint(db: Session, submission_id: int | None = None,
                source_id: int | None = None) -> float:
    """The control task's work for one document, timed."""
    t0 = time.perf_counter()
    fingerprinting.fingerprint(db, FingerprintPayload(submission_id=submission_id,
                                                      source_id=source_id))
    return time.perf_counter() - t0


def build_course(db: Session, args: argparse.Namespace) -> tuple[list[float], CodeGen,
                                                                  list[Student], list[int], str]:
    gen = CodeGen(random.Random(args.seed))
    students, solutions = make_class(gen, args.students)
    io = course_io()
    user_ids = []
    for s in students:
        user = User(username=s.owner, role="student")
        db.add(user)
        db.flush()
        user_ids.append(user.id)
    public = Student("public", [list(f) for f in solutions[0]], {n: n for n in s.names})
    for kind, name, text in (("base", "seq-flashattention.c", STARTER.read_text()),
                             ("public", "last-year.cu", render(gen, public, io))):
        db.add(SimilaritySource(suite="hw4", kind=kind, name=name, content=text))
    db.commit()
    for source_id in (1, 2):
        fingerprint(db, source_id=source_id)
    costs = []
    for round_no in range(args.submissions):
        if round_no == args.submissions // 2:
            plant_copies(gen, students, 15)
        order = gen.rng.sample(range(len(students)), len(students))
        for i in order:
            edit(gen, students[i])
            sub_id = store(db, user_ids[i], render(gen, students[i], io),
                           gen.rng.randint(0, 30), gen.rng)
            costs.append(fingerprint(db, submission_id=sub_id))
    return costs, gen, students, user_ids, io


def timed(client: TestClient, path: str, headers: dict[str, str], repeat: int = 1) -> float:
    """Median seconds of `repeat` GETs of `path` (each must answer 200)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        response = client.get(path, headers=headers)
        times.append(time.perf_counter() - t0)
        assert response.status_code == 200, response.text[:300]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--submissions", type=int, default=10)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fj-simpage-") as tmp:
        settings = Settings(environment="test", data_dir=Path(tmp), suite="hw4",
                            database_url=args.database_url, sweep_interval_s=0,
                            migrate_on_start=False, secret_key="bench-secret-not-for-use")
        upgrade(settings.db_url)
        with wired_sessions(settings.db_url)() as db:
            t0 = time.perf_counter()
            costs, gen, students, user_ids, io = build_course(db, args)
            build_s = time.perf_counter() - t0
            ta = users.add_user(db, "tara", "ta", "a long bench password")
            headers = {"Authorization": f"Bearer {users.issue_token(db, ta, 'bench', None)}"}
            db.commit()
            measure(settings, db, args, costs, build_s, headers, (gen, students, user_ids, io))


def measure(settings: Settings, db: Session, args: argparse.Namespace, costs: list[float],
            build_s: float, headers: dict[str, str], course: tuple) -> None:
    gen, students, user_ids, io = course
    with TestClient(create_app(settings)) as client:
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
        cold = timed(client, "/similarity", headers)
        warm = timed(client, "/similarity", headers, repeat=5)
        api = timed(client, "/api/similarity/pairs", headers, repeat=5)
        edit(gen, students[0])
        sub_id = store(db, user_ids[0], render(gen, students[0], io), 30, gen.rng)
        one = fingerprint(db, submission_id=sub_id)
        incremental = timed(client, "/similarity", headers)
        body = client.get("/api/similarity/pairs?limit=1", headers=headers).json()
        top = body["pairs"][0]
        side = timed(client, f"/similarity/compare?a={top['a']['doc_id']}&b={top['b']['doc_id']}",
                     headers, repeat=3)
    table(args, settings, costs, build_s, body["documents"], (cold, warm, api, one, incremental,
                                                               side))


def table(args: argparse.Namespace, settings: Settings, costs: list[float], build_s: float,
          documents: int, times: tuple[float, ...]) -> None:
    ms = sorted(c * 1000 for c in costs)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    backend = "PostgreSQL" if settings.database_url else "SQLite"
    out = Table(title=f"similarity page, {args.students} students x {args.submissions} "
                      f"submissions, {backend}")
    for column in ("submissions", "compared", "fingerprint p50 ms", "p99 ms", "course build s",
                   "page cold ms", "page warm ms", "API warm ms", "new submission: fingerprint "
                   "+ page ms", "side by side ms", "peak RSS MB"):
        out.add_column(column, justify="right")
    cold, warm, api, one, incremental, side = (t * 1000 for t in times)
    out.add_row(str(len(costs)), str(documents), f"{statistics.median(ms):.1f}",
                f"{ms[int(0.99 * (len(ms) - 1))]:.1f}", f"{build_s:.1f}", f"{cold:.0f}",
                f"{warm:.0f}", f"{api:.0f}", f"{one:.0f} + {incremental:.0f}", f"{side:.0f}",
                f"{peak:.0f}")
    Console(width=200).print(out)


if __name__ == "__main__":
    main()
