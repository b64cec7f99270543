"""`flashjudge serve`: the web service plus workers on one machine, with embedded defaults.

SQLite and the filesystem broker under FLASHJUDGE_DATA_DIR unless FLASHJUDGE_DATABASE_URL /
FLASHJUDGE_BROKER_URL say otherwise. Starts a control worker (records results) and judge
workers: one per GPU that nvidia-smi lists, each pinned with CUDA_VISIBLE_DEVICES (queues gpu
and cpu), else one on the CPU track (queue cpu).
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys

import uvicorn
from sqlalchemy import func, select

from app.accounts import users
from app.core.config import Settings, get_settings
from app.core.errors import UserError
from app.core.http_server import server_options
from app.course.assignments import ensure_default
from app.db.migrate import upgrade
from app.db.models import User
from app.db.session import session_scope
from app.main import create_app
from app.wiring import wired_sessions
from flashjudge_cli.commands.machine import default_suite, judge_gpus
from flashjudge_cli.commands.stop import pid_file
from flashjudge_cli.commands.worker import (
    WorkerSpec,
    add_gpus_option,
    add_insecure_option,
    control_spec,
    interrupt,
    judge_specs,
    sandbox_refusal,
    start,
    stop,
)
from worker.gpus import Gpu, GpuSelectionError

# serve is one machine's whole service, stopped by a person who waits for it: its workers get a
# few seconds to finish, then are killed with their children. A judging cut short stays queued
# or running in the database, and the sweeper sends it again once serve is back.
SERVE_STOP_GRACE_S = 5.0
SHUTDOWN_S = 3  # open live streams (the scoreboard's, a result page's) are closed after this


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("serve", help="run the web service and a worker on this machine")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--suite", default=None,
                        help="suite to judge against (default: $FLASHJUDGE_SUITE, else hw4 with "
                             "a GPU and hw4-mini on the CPU track)")
    parser.add_argument("--no-worker", action="store_true",
                        help="serve only; workers run elsewhere (flashjudge worker)")
    add_gpus_option(parser)
    add_insecure_option(parser)
    parser.set_defaults(func=run)


def prepare_environment(suite: str | None, gpus: list[Gpu]) -> None:
    """Settings are read from the environment, so options become variables the children share."""
    os.environ["FLASHJUDGE_SUITE"] = suite or default_suite(gpus)
    os.environ.setdefault("FLASHJUDGE_DATA_DIR", "data")
    os.environ["FLASHJUDGE_DATA_DIR"] = os.path.abspath(os.environ["FLASHJUDGE_DATA_DIR"])
    if not gpus:  # the CPU track: custom runs and the submit page's choice on the CPU too
        os.environ.setdefault("FLASHJUDGE_CUSTOM_RUN_QUEUE", "cpu")
        os.environ.setdefault("FLASHJUDGE_DEFAULT_LANGUAGE", "c-program")


def serve_judges(gpus: list[Gpu]) -> list[WorkerSpec]:
    """One judge worker per GPU (each also takes CPU work), or one on the CPU track."""
    return judge_specs(gpus, "gpu,cpu" if gpus else "cpu")


def track(gpus: list[Gpu]) -> str:
    """Where judging happens, in words for the start-up line."""
    if not gpus:
        return "CPU track (c-program; CUDA languages need a GPU worker)"
    return f"{len(gpus)} GPU(s): " + ", ".join(f"gpu{g.index} {g.name} ({g.uuid})" for g in gpus)


def first_admin(settings: Settings) -> None:
    """With no users yet, create the TA "admin" so a fresh install can log in at all."""
    with session_scope(settings.db_url) as db:
        if db.scalar(select(func.count()).select_from(User)):
            return
        password = settings.admin_password or secrets.token_urlsafe(12)
        try:
            users.add_user(db, "admin", "ta", password, display_name="Administrator")
        except UserError as exc:
            raise SystemExit(f"flashjudge serve: FLASHJUDGE_ADMIN_PASSWORD: {exc.detail}") from exc
    print(f"flashjudge serve: no users yet, created TA 'admin' with password {password!r}\n"
          "  add people with: flashjudge users import roster.csv  |  flashjudge users add NAME")


def first_assignment(settings: Settings) -> None:
    """Make the default assignment now, on the suite this machine judges (hw4-mini on the CPU
    track): left to its first use, a later `flashjudge assignment list` run without serve's
    environment would name it after FLASHJUDGE_SUITE's default, hw4, instead."""
    with session_scope(settings.db_url) as db:
        ensure_default(db, settings.suite)


def run(args: argparse.Namespace) -> int:
    refusal = None if args.no_worker else sandbox_refusal(args.insecure)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    try:
        gpus = [] if args.no_worker else judge_gpus(args.gpus)
    except GpuSelectionError as exc:
        print(f"flashjudge serve: {exc}", file=sys.stderr)
        return 2
    prepare_environment(args.suite, gpus)
    settings = get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.db_url, suite=settings.suite)
    wired_sessions(settings.db_url)  # before the first write (create_app installs them too)
    first_admin(settings)
    first_assignment(settings)
    specs = [] if args.no_worker else [control_spec(), *serve_judges(gpus)]
    procs = [start(s) for s in specs]
    pid_path = pid_file(settings.data_dir)
    pid_path.write_text(f"{os.getpid()}\n")
    where = "elsewhere (--no-worker)" if args.no_worker else track(gpus)
    print(f"flashjudge serve: http://{args.host}:{args.port}  data {settings.data_dir}  "
          f"suite {settings.suite}  judging on {where}", flush=True)
    signal.signal(signal.SIGTERM, interrupt)  # uvicorn re-raises it after its own shutdown
    try:
        uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info",
                    proxy_headers=False,  # X-Forwarded-* from trusted proxies only: app/core/net
                    timeout_graceful_shutdown=SHUTDOWN_S, **server_options(settings))
    except KeyboardInterrupt:
        pass
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C must not cut the stop short
            signal.signal(sig, signal.SIG_IGN)
        stop(procs, SERVE_STOP_GRACE_S)
        pid_path.unlink(missing_ok=True)
        print("flashjudge serve: stopped", flush=True)
    return 0
