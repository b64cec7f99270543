"""The known-device cookie: which usernames signed in from this browser before.

Login throttling counts the failures of a browser that holds this cookie for a username apart
from everyone else's (app/accounts/users.py `login_rules`), so a classmate guessing at an account
from elsewhere slows only strangers, never its owner at their own browser (OWASP's "device
cookies"). The cookie is signed with the session key and carries a random device id and at most
`MAX_NAMES` usernames; a forged or expired one is just absent. It survives logging out.
"""

from __future__ import annotations

import secrets

from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.requests import Request
from starlette.responses import Response

from app.core.config import Settings
from app.core.net import is_https

COOKIE = "fj_device"
MAX_AGE_S = 180 * 86400  # a semester and a half: a student's laptop stays known all term
MAX_NAMES = 8  # usernames remembered per browser (a shared lab machine: the latest ones)
SALT = "flashjudge-known-device"


def _signer(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.secret_key, salt=SALT)


def read(request: Request, settings: Settings) -> tuple[str, list[str]]:
    """(device id, usernames) from the cookie; a fresh id and no names without a valid one."""
    raw = request.cookies.get(COOKIE, "")
    try:
        data = _signer(settings).loads(raw, max_age=MAX_AGE_S) if raw else {}
        return str(data["d"]), [str(n) for n in data["u"]][:MAX_NAMES]
    except (BadSignature, KeyError, TypeError, ValueError):
        return secrets.token_urlsafe(16), []


def device_for(request: Request, username: str, settings: Settings) -> str | None:
    """This browser's device id if it signed in as `username` before, else None."""
    device, names = read(request, settings)
    return device if username.lower() in names else None


def remember(request: Request, response: Response, username: str, settings: Settings) -> None:
    """After a successful sign-in: add `username` to this browser's cookie (newest first)."""
    device, names = read(request, settings)
    name = username.lower()
    names = [name, *[n for n in names if n != name]][:MAX_NAMES]
    response.set_cookie(COOKIE, _signer(settings).dumps({"d": device, "u": names}),
                        max_age=MAX_AGE_S, httponly=True, samesite="lax", path="/",
                        secure=settings.secure_cookies or is_https(request.scope, settings))
