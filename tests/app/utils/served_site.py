"""A real uvicorn process serving the app (SQLite, embedded broker) and Debian's Chromium, for
browser tests that look at what people see, and at what the server writes to its log.

`FLASHJUDGE_SHOTS=/some/dir` makes `shoot` save full-page screenshots at 1280 px and at 390 px
(a phone) for a person to look at; nothing is saved otherwise, and nothing is asserted on them.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.session import get_engine, session_factory
from app.wiring import wired_sessions
from tests.app.test_served import CHROMIUM, free_port
from tests.app.utils.factories import PASSWORD, Account, make_user
from tests.app.utils.processes import REPO, wait_for

SECRET = "browser-tests-secret-not-for-production"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
WIDTHS = (1280, 390)
needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                    reason="Debian's chromium is not installed (make test does)")


@dataclass
class Site:
    """A running service, its database and its log."""

    url: str  # base URL
    settings: Settings  # the same data dir and database as the server
    accounts: dict[str, Account]  # alice, bob (students) and tara (TA)
    log: Path  # the server's stdout and stderr (uvicorn's access lines included)
    env: dict[str, str]  # the server's environment (to start it again)
    port: int  # where it listens
    proc: subprocess.Popen | None = None  # the server process while it runs

    def db(self) -> Session:
        return wired_sessions(self.settings.db_url)()  # its writes keep the standing, as the
        # server's do (app/wiring.py)


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def start(site: Site) -> None:
    """uvicorn as the Dockerfile runs it (--factory), appending to the site's log."""
    with site.log.open("ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory",
                                 "app.main:create_app", "--port", str(site.port)],
                                env=site.env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    wait_for(lambda: proc.poll() is not None or answers(f"{site.url}/login"), 60, "the server")
    assert proc.poll() is None, site.log.read_text()[-3000:]
    site.proc = proc


def crash(site: Site) -> None:
    """The API process dies at once (a restart, an OOM kill): open connections are cut."""
    assert site.proc is not None
    site.proc.kill()
    site.proc.wait(timeout=30)
    site.proc = None


@contextlib.contextmanager
def served(data: Path, **env: str) -> Iterator[Site]:
    """The app on a free port over a fresh database under `data`, with extra FLASHJUDGE_* env."""
    settings = Settings(environment="test", secret_key=SECRET, data_dir=data, suite="hw4-mini",
                        submit_interval_s=0, sweep_interval_s=0)
    upgrade(settings.db_url)
    with session_factory(settings.db_url)() as db:
        accounts = {name: make_user(db, name, role) for name, role in (
            ("alice", "student"), ("bob", "student"), ("tara", "ta"))}
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FLASHJUDGE_")}
    environ.update(FLASHJUDGE_DATA_DIR=str(data), FLASHJUDGE_SUITE="hw4-mini",
                   FLASHJUDGE_ENVIRONMENT="test", FLASHJUDGE_SECRET_KEY=SECRET,
                   FLASHJUDGE_SUBMIT_INTERVAL_S="0", FLASHJUDGE_SWEEP_INTERVAL_S="0",
                   PYTHONPATH=str(REPO), **env)
    port = free_port()
    site = Site(f"http://127.0.0.1:{port}", settings, accounts, data / "server.log", environ,
                port)
    start(site)
    try:
        yield site
    finally:
        if site.proc is not None:
            site.proc.terminate()
            site.proc.wait(timeout=30)
        get_engine(settings.db_url).dispose()


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def log_in(page: Any, site: Site, username: str) -> None:
    page.goto(f"{site.url}/login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/submit")


def shoot(page: Any, name: str) -> None:
    """Full-page screenshots at each of WIDTHS under $FLASHJUDGE_SHOTS (when set)."""
    folder = os.environ.get("FLASHJUDGE_SHOTS")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    size = page.viewport_size or {"width": 1280, "height": 800}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(path=str(Path(folder) / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size(size)


SIDEWAYS_JS = """() => {
  const width = document.documentElement.clientWidth;
  const found = [];
  if (document.documentElement.scrollWidth > width + 1) found.push('the page');
  for (const el of document.querySelectorAll('body *')) {
    const style = getComputedStyle(el);
    if (style.display === 'none' || el.closest('[hidden]')) continue;
    const scrolls = ['auto', 'scroll'].includes(style.overflowX);
    if (scrolls && el.scrollWidth > el.clientWidth + 1) {
      found.push(el.id || el.className || el.tagName);
    }
  }
  return found;
}"""


def sideways(page: Any, width: int = 390) -> list[str]:
    """What a reader at `width` px must scroll sideways to see: the page itself, or any box that
    scrolls on its own (a table in an overflow wrapper); [] when everything fits."""
    size = page.viewport_size or {"width": 1280, "height": 800}
    page.set_viewport_size({"width": width, "height": 800})
    try:
        return list(page.evaluate(SIDEWAYS_JS))
    finally:
        page.set_viewport_size(size)
