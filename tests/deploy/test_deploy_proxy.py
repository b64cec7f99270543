"""The API as compose starts it believes no client's X-Forwarded-For: a forged header does not
change the address the service sees (which the per-address login throttle counts)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from tests.app.utils.live_server import free_port
from tests.app.utils.processes import REPO, wait_for
from tests.deploy.test_deploy_commands import compose_commands


def api_argv(port: int) -> list[str]:
    (argv,) = [a for name, a in compose_commands() if name == "docker-compose.yml:api"]
    argv = [*argv]
    argv[argv.index("--host") + 1], argv[argv.index("--port") + 1] = "127.0.0.1", str(port)
    return [sys.executable, "-m", *argv]


def test_a_forged_forwarded_for_does_not_change_the_client_address(tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "api.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLASHJUDGE_")}
    env.update(FLASHJUDGE_DATA_DIR=str(tmp_path), FLASHJUDGE_ENVIRONMENT="test",
               FORWARDED_ALLOW_IPS="*", PYTHONPATH=str(REPO))  # what a careless image might set
    with log.open("wb") as out:
        proc = subprocess.Popen(api_argv(port), env=env, cwd=REPO, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: proc.poll() is not None or b"Uvicorn running" in log.read_bytes(), 60,
                 "the API to start")
        httpx.get(f"http://127.0.0.1:{port}/healthz", headers={"X-Forwarded-For": "6.6.6.6"})
        wait_for(lambda: b"/healthz" in log.read_bytes(), 10, "the access log line")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    line = next(x for x in log.read_text().splitlines() if "/healthz" in x)
    assert "127.0.0.1" in line and "6.6.6.6" not in line
