"""The processes of bench/gpu_cluster.py's deployment: the head (API, control worker) and one GPU
node, each a process group with its own log, killable with SIGKILL and restartable.

The node is started the way docker-compose.node.yml starts it: `flashjudge worker --gpus SPEC`
with an environment of its own that holds the broker URL and nothing of the head's (no database
URL, no secret key), and a data directory of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BROKER = os.environ.get("FLASHJUDGE_BROKER_URL", "redis://127.0.0.1:6379/0")
DATABASE = os.environ.get("FLASHJUDGE_DATABASE_URL",
                          "postgresql+psycopg://postgres@127.0.0.1:5432/flashjudge")
PORT = os.environ.get("FJ_CLUSTER_PORT", "8000")
NODE_DATA = "/tmp/fj-node"  # the node's data directory (its prepared inputs, its cache)
CLI = os.environ.get("FJ_CLI", "flashjudge_cli.main").split()  # `python -m` target of the CLI


def json_lines(path: Path) -> list[dict]:
    """The JSON log lines of a file (a line cut by a SIGKILL, or a banner, is skipped)."""
    found = []
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                with contextlib.suppress(json.JSONDecodeError):
                    found.append(json.loads(line))
    return found


class Procs:
    """Start, kill and stop the deployment's processes; logs under `out`."""

    def __init__(self, out: Path) -> None:
        self.out = out
        out.mkdir(parents=True, exist_ok=True)
        self.procs: dict[str, subprocess.Popen] = {}
        self.secret = secrets.token_urlsafe(32)

    def log(self, name: str) -> Path:
        return self.out / f"{name}.log"

    def head_env(self) -> dict[str, str]:
        return {**os.environ, "FLASHJUDGE_DATABASE_URL": DATABASE, "FLASHJUDGE_BROKER_URL": BROKER,
                "FLASHJUDGE_DATA_DIR": "/tmp/fj-head", "FLASHJUDGE_SECRET_KEY": self.secret,
                "FLASHJUDGE_ENVIRONMENT": "production",
                "FLASHJUDGE_SUITE": os.environ.get("FJ_CLUSTER_SUITE", "hw4"),
                "FLASHJUDGE_SUBMIT_INTERVAL_S": "0",
                # a judging lost with a killed node is re-sent ~45 s later, not ~2 min (the
                # faults phase's two kills fit the check): 4 heartbeats, swept every 5 s
                "FLASHJUDGE_RUNNING_TIMEOUT_S": os.environ.get("FJ_CLUSTER_RUNNING_TIMEOUT_S",
                                                               "45"),
                "FLASHJUDGE_SWEEP_INTERVAL_S": "5",
                "FLASHJUDGE_READY_QUEUES": os.environ.get("FJ_CLUSTER_QUEUES", "control,gpu")}

    def node_env(self) -> dict[str, str]:
        keep = ("PATH", "HOME", "PYTHONPATH", "PYTHONUNBUFFERED", "LANG", "FLASHJUDGE_BWRAP")
        env = {k: os.environ[k] for k in keep if k in os.environ}
        passed = {k.removeprefix("FJ_NODE_"): v for k, v in os.environ.items()
                  if k.startswith("FJ_NODE_FLASHJUDGE_")}  # FJ_NODE_FLASHJUDGE_X: the node X
        return {**env, **passed, "FLASHJUDGE_BROKER_URL": BROKER,
                "FLASHJUDGE_DATA_DIR": NODE_DATA}

    def spawn(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        with self.log(name).open("ab") as out:
            self.procs[name] = subprocess.Popen(argv, env=env, cwd=REPO, stdout=out,
                                                stderr=subprocess.STDOUT, start_new_session=True)

    def cli(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "-m", *CLI, *args], env=self.head_env(), cwd=REPO,
                              capture_output=True, text=True, timeout=300)
        if done.returncode:
            raise RuntimeError(f"flashjudge {' '.join(args)}: {done.stderr[-2000:]}")
        return done.stdout.strip()

    def start_head(self, students: int) -> list[str]:
        """Migrations, students (their tokens), the API and the control worker."""
        subprocess.run([sys.executable, "-c", "from app.core.config import get_settings; "
                        "from app.db.migrate import upgrade; upgrade(get_settings().db_url)"],
                       env=self.head_env(), cwd=REPO, check=True, timeout=300)
        tokens = self.student_tokens(students)
        self.spawn("api", [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory",
                           "--host", "127.0.0.1", "--port", PORT], self.head_env())
        self.spawn("control", [sys.executable, "-m", *CLI, "worker", "--control"],
                   self.head_env())
        self.wait_http(f"http://127.0.0.1:{PORT}/healthz", self.procs["api"])
        return tokens

    def student_tokens(self, students: int) -> list[str]:
        """student0..N-1 (made if missing) and a new API token each, in one process (what
        `flashjudge users add` and `users token` do, without 2N interpreter starts)."""
        script = (
            "import sys\n"
            "from app.accounts import tokens, users\n"
            "from app.core.config import get_settings\n"
            "from app.db.session import session_scope\n"
            "settings = get_settings()\n"
            "with session_scope(settings.db_url) as db:\n"
            "    for i in range(int(sys.argv[1])):\n"
            "        name = f'student{i}'\n"
            "        user = users.get_by_username(db, name) or users.add_user(db, name)\n"
            "        print(tokens.issue(db, user, 'cluster', 86400,\n"
            "                           keep=settings.max_tokens_per_user).token)\n")
        done = subprocess.run([sys.executable, "-c", script, str(students)],
                              env=self.head_env(), cwd=REPO, capture_output=True, text=True,
                              timeout=300)
        if done.returncode:
            raise RuntimeError(f"making students: {done.stderr[-2000:]}")
        return done.stdout.split()

    def start_node(self, gpus: str) -> None:
        if "node" not in self.procs or self.procs["node"].poll() is not None:
            self.spawn("node", [sys.executable, "-m", *CLI, "worker", "--gpus", gpus],
                       self.node_env())

    def wait_node_live(self, timeout_s: float = 150) -> float | None:
        """Seconds until /readyz answers 200 (the node's workers consume their queues), or
        None when it did not within `timeout_s` (the last answer is printed)."""
        import httpx
        began = time.monotonic()
        body = ""
        while time.monotonic() - began < timeout_s:
            with contextlib.suppress(httpx.HTTPError):
                answer = httpx.get(f"http://127.0.0.1:{PORT}/readyz", timeout=10)
                if answer.status_code == 200:
                    return round(time.monotonic() - began, 1)
                body = answer.text
            time.sleep(1)
        print(f"the node was not ready in {timeout_s:.0f} s: {body[:600]}", flush=True)
        return None

    def kill_node(self) -> None:
        self.kill("node")

    def stop_node(self, grace_s: float = 60) -> None:
        """SIGTERM the node (its workers finish or give back their task), SIGKILL after grace."""
        proc = self.procs.get("node")
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=grace_s)
        self.kill("node")

    def kill(self, name: str) -> None:
        proc = self.procs.get(name)
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)

    def restart_redis(self) -> None:
        port = BROKER.rsplit(":", 1)[1].split("/")[0]
        subprocess.run(["bash", "-c", f"source bench/node_servers.sh && restart_redis {port}"],
                       cwd=REPO, check=True, timeout=60)

    def gpu_leftovers(self, after_s: float = 0.0) -> str:
        """Compute processes on the GPUs (after `after_s`): a stopped or killed node must leave
        none (a run of a killed worker still on its GPU would be a stray)."""
        time.sleep(after_s)
        try:
            done = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                                   "--format=csv,noheader"], capture_output=True, text=True,
                                  timeout=30)
        except (OSError, subprocess.SubprocessError):
            return "no nvidia-smi"
        return done.stdout.strip().replace("\n", "; ") or "none"

    def stop_all(self, grace_s: float = 20) -> None:
        """SIGTERM every group at once, SIGKILL what is left after `grace_s`."""
        live = [p for p in self.procs.values() if p.poll() is None]
        for proc in live:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(p.poll() is None for p in live):
            time.sleep(0.2)
        for name in list(self.procs):
            self.kill(name)

    @staticmethod
    def wait_http(url: str, proc: subprocess.Popen, timeout_s: float = 90) -> None:
        import httpx
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the process serving {url} exited ({proc.returncode})")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url, timeout=5).status_code == 200:
                    return
            time.sleep(0.5)
        raise RuntimeError(f"{url} did not answer in {timeout_s} s")
