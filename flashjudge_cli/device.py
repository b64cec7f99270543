"""This machine's known-device cookie, kept between runs of `flashjudge submit`.

The server counts the failed logins of a client that signed in as a user before apart from
everyone else's, so a classmate guessing at the account slows strangers, never its owner. A
browser keeps that cookie by itself; the CLI keeps it in a file (FLASHJUDGE_DEVICE_FILE, by
default ~/.config/flashjudge/device), readable by its owner only. It holds no password and no
token: only a signed device id and the usernames that signed in from here.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx

COOKIE = "fj_device"  # the server's name for it (app/core/known_device.py)


def device_file() -> Path:
    configured = os.environ.get("FLASHJUDGE_DEVICE_FILE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "flashjudge" / "device"


def load(client: httpx.Client) -> None:
    """Send the kept cookie (if any) with the client's requests."""
    try:
        value = device_file().read_text().strip()
    except OSError:
        return
    if value:
        client.cookies.set(COOKIE, value)


def keep(response: httpx.Response) -> None:
    """Keep the cookie a successful login set; a machine where it cannot be written just stays
    unknown (the login itself worked)."""
    value = response.cookies.get(COOKIE)
    if not value:
        return
    path = device_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600, exist_ok=True)
        path.write_text(value + "\n")
    except OSError:
        return
