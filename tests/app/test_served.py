"""`flashjudge serve` for real (SQLite, embedded broker, CPU worker), driven by CLI and browser.

The browser is Debian's chromium (/usr/bin/chromium) driven by playwright's Python package; it
never downloads a browser. Without chromium the browser test is skipped, saying so.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.app.utils.processes import REPO, wait_for

pytestmark = pytest.mark.slow
SOURCE = Path(__file__).parent / "utils" / "seq_attention.c"
CHROMIUM = "/usr/bin/chromium"
FLASHJUDGE = [sys.executable, "-m", "flashjudge_cli.main"]
PASSWORD = "a long passphrase"  # the minimum length is 10


@dataclass
class Served:
    """A running `flashjudge serve`."""

    url: str  # base URL
    env: dict[str, str]  # its environment (data dir, suite)
    token: str  # a personal API token of the student "alice"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ready(url: str, token: str) -> bool:
    """The service answers and a live worker judges c-program (uploads are refused before)."""
    try:
        languages = httpx.get(f"{url}/api/languages", timeout=2,
                              headers={"Authorization": f"Bearer {token}"})
    except httpx.HTTPError:
        return False
    return languages.status_code == 200 and "c-program" in languages.json()["available"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed: judging needs the sandbox")
    data = tmp_path_factory.mktemp("served")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLASHJUDGE_")}
    env.update(FLASHJUDGE_DATA_DIR=str(data), FLASHJUDGE_JUDGE_TESTS="t01",
               FLASHJUDGE_SUBMIT_INTERVAL_S="0", FLASHJUDGE_SWEEP_INTERVAL_S="2",
               PYTHONPATH=str(REPO))
    for name, role in (("alice", "student"), ("tara", "ta")):
        subprocess.run([*FLASHJUDGE, "users", "add", name, "--role", role, "--password", PASSWORD],
                       env=env, check=True, cwd=REPO, capture_output=True)
    token = subprocess.run([*FLASHJUDGE, "users", "token", "alice"], env=env, check=True,
                           cwd=REPO, capture_output=True, text=True).stdout.strip()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (data / "serve.log").open("wb") as log:
        proc = subprocess.Popen([*FLASHJUDGE, "serve", "--port", str(port), "--suite", "hw4-mini"],
                                env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: ready(url, token) or proc.poll() is not None, 90,
                 "flashjudge serve to be ready")
        assert proc.poll() is None, (data / "serve.log").read_text()[-3000:]
        yield Served(url, env, token)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_cli_submit_follows_the_judging_and_prints_the_table(served: Served):
    result = subprocess.run([*FLASHJUDGE, "submit", str(SOURCE), "--server", served.url,
                             "--token", served.token], env=served.env, cwd=REPO,
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "submitted c-program as #" in result.stdout
    assert "AC" in result.stdout and "t01" in result.stdout and "score 10/10" in result.stdout


def test_cli_submit_reports_a_refusal_clearly(served: Served, tmp_path: Path):
    bad = tmp_path / "hw4.c"
    bad.write_bytes(b"int main(){}\n\xff\n")
    result = subprocess.run([*FLASHJUDGE, "submit", str(bad), "--server", served.url,
                             "--token", served.token], env=served.env, cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "422: hw4.c is not UTF-8 text" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_submit_of_cuda_without_a_gpu_worker_is_refused_saying_why(served: Served,
                                                                       tmp_path: Path):
    source = tmp_path / "hw4.cu"
    source.write_text("int main() { return 0; }\n")
    result = subprocess.run([*FLASHJUDGE, "submit", str(source), "--server", served.url,
                             "--token", served.token], env=served.env, cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert ("409: no GPU worker is connected: cuda-program cannot be judged now (languages "
            "that can be judged now: c-program)") in result.stderr


def test_a_sign_in_token_in_a_url_never_reaches_the_access_log(served: Served):
    secret = "a-one-time-token-nobody-may-read"
    opened = httpx.get(f"{served.url}/set-password?token={secret}&x=1", timeout=10)
    assert opened.status_code == 410  # no such link; it is logged all the same
    log = Path(served.env["FLASHJUDGE_DATA_DIR"], "serve.log")
    wait_for(lambda: "/set-password?" in log.read_text(), 10, "the access line")
    assert secret not in log.read_text()
    assert '"GET /set-password?token=[redacted]&x=1 HTTP/1.1" 410' in log.read_text()


@pytest.mark.skipif(not Path(CHROMIUM).exists(),
                    reason="Debian's chromium is not installed (make test installs it)")
def test_browser_login_submit_watch_the_verdict_and_see_the_scoreboard(served: Served):
    sync_api = pytest.importorskip("playwright.sync_api")
    args = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=args, headless=True)
        page = browser.new_page()
        page.goto(f"{served.url}/login")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url("**/submit")
        page.select_option("select[name=language]", "c-program")
        page.set_input_files("#files", str(SOURCE))
        page.click("#submit-form button[type=submit]")
        page.wait_for_url("**/submissions/*")
        verdict = page.locator("#verdict")
        verdict.wait_for(timeout=180_000)  # arrives over SSE, without reloading
        assert verdict.inner_text() == "AC"
        assert page.locator("#tests td").first.inner_text() == "t01"
        assert page.locator("svg.chart rect.bar").count() == 1
        page.goto(f"{served.url}/scoreboard")
        row = page.locator("tr[data-user=alice]")
        assert row.locator("td").nth(1).inner_text() == "1"  # User | Rank | Score | Passed | Time
        assert "ac" in (row.locator("td").nth(5).get_attribute("class") or "")  # t01
        browser.close()
