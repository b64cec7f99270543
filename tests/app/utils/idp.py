"""A real OpenID provider for the sign-in tests (tests/oidc/provider.js: panva's oidc-provider
under Node), and a browser-like walk through its login and consent pages with httpx.

The provider's packages are installed from tests/oidc/package-lock.json (`npm ci`) the first time
a test needs them (`make test` does it beforehand); the tests skip only where Node is missing.
"""

from __future__ import annotations

import contextlib
import html
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest

from tests.app.utils.processes import REPO, wait_for

IDP_DIR = REPO / "tests" / "oidc"
CLIENT_ID, CLIENT_SECRET = "flashjudge", "flashjudge-test-secret"  # as provider.js registers
needs_node = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                                reason="Node.js and npm run the test OpenID provider")
_FORM = re.compile(r'<form[^>]*action="([^"]+)"[^>]*method="post"[^>]*>(.*?)</form>', re.S)
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')


def install() -> None:
    """`npm ci` from the lock file, once (node_modules newer than the lock: done)."""
    modules, lock = IDP_DIR / "node_modules", IDP_DIR / "package-lock.json"
    if modules.is_dir() and modules.stat().st_mtime >= lock.stat().st_mtime:
        return
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=IDP_DIR,
                   check=True, timeout=300)


@contextlib.contextmanager
def provider(port: int, redirect_uris: list[str], log: Path,
             claims_in_id_token: bool = False) -> Iterator[str]:
    """The provider on `port` until the block ends; yields its issuer URL. Its e-mail and
    profile claims come from the userinfo endpoint, or in the ID token itself."""
    install()
    env = {**os.environ, "IDP_CLAIMS_IN_ID_TOKEN": "1" if claims_in_id_token else "0"}
    with log.open("wb") as out:
        proc = subprocess.Popen(["node", "provider.js", str(port), *redirect_uris], cwd=IDP_DIR,
                                stdout=out, stderr=subprocess.STDOUT, env=env)
    issuer = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: proc.poll() is not None or "ready" in log.read_text(), 60,
                 "the OpenID provider")
        assert proc.poll() is None, log.read_text()[-3000:]
        yield issuer
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@dataclass
class Walk:
    """Where a walk through the sign-in ended."""

    response: httpx.Response  # the judge's answer to the callback (a redirect or a page)
    callback: str  # the callback URL the provider sent the browser to


Tamper = Callable[[str], str]  # changes a URL on the way (the tests' attacker)


def sign_in(browser: httpx.Client, start: str, login: str, to_idp: Tamper = str,
            to_callback: Tamper = str) -> Walk:
    """From the judge's "Sign in with ..." link through the provider's login and consent pages
    back to the judge, as a browser would: redirects followed, forms posted, cookies kept."""
    response = browser.get(start)
    response = browser.get(to_idp(location(response)))
    response = through_provider(browser, response, login)
    callback = to_callback(location(response))
    return Walk(browser.get(callback), callback)


def through_provider(browser: httpx.Client, response: httpx.Response,
                     login: str) -> httpx.Response:
    """Fill the provider's forms (login, then consent) until it redirects to the judge."""
    for _ in range(12):
        if response.is_redirect and "/login/oidc/callback" in location(response):
            return response
        if response.is_redirect:
            response = browser.get(location(response))
            continue
        assert response.status_code == 200, response.text[:2000]
        action, fields = form(response)
        if fields.get("prompt") == "login":
            fields.update(login=login, password="any")
        response = browser.post(urljoin(str(response.url), action), data=fields)
    raise AssertionError("the provider never sent the browser back")


def form(page: httpx.Response) -> tuple[str, dict[str, str]]:
    found = _FORM.search(page.text)
    assert found, page.text[:2000]
    fields = {name: html.unescape(value) for name, value in _HIDDEN.findall(found.group(2))}
    return html.unescape(found.group(1)), fields


def location(response: httpx.Response) -> str:
    assert response.is_redirect, (response.status_code, response.text[:2000])
    return urljoin(str(response.url), response.headers["location"])
