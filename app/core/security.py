"""Passwords (argon2), random secrets kept as SHA-256 (tokens, session ids, links), CSRF."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from app.core.errors import UserError

MIN_PASSWORD_LENGTH = 10  # characters; long passphrases beat composition rules
MAX_PASSWORD_LENGTH = 200  # argon2 hashes any length; this only bounds the work per attempt
_hasher = PasswordHasher()


def check_new_password(password: str) -> None:
    """Refuse a password too short to resist guessing (or absurdly long), naming the field."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UserError(f"the password needs at least {MIN_PASSWORD_LENGTH} characters "
                        f"(it has {len(password)}); a few words make a good one",
                        field="password")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise UserError(f"the password may have at most {MAX_PASSWORD_LENGTH} characters",
                        field="password")


def hash_password(password: str) -> str:
    return _hasher.hash(password)


@lru_cache(maxsize=1)
def dummy_hash() -> str:
    """The hash of a random secret nobody knows, with the hasher's own parameters: checking a
    password against it costs what a real check costs (made on first use, not at import)."""
    return _hasher.hash(secrets.token_urlsafe(32))


def verify_password(password: str, password_hash: str | None) -> bool:
    """True when `password` matches. False for users who have no password yet, after checking it
    against `dummy_hash()`: without that work a wrong password answered in 20 ms for them and for
    unknown names but 340 ms for accounts with a password, telling which accounts to attack."""
    try:
        return _hasher.verify(password_hash or dummy_hash(), password) and bool(password_hash)
    except (VerificationError, InvalidHashError):
        return False


def new_token() -> str:
    """A fresh bearer token; only its hash is stored, so a database leak leaks no tokens."""
    return "fj_" + secrets.token_urlsafe(32)


def new_secret() -> str:
    """A random session id or sign-in link token (256 bits); stored only as its hash."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """SHA-256 hex of a high-entropy secret (no salt needed: the secret is random)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_csrf_token() -> str:
    return secrets.token_urlsafe(24)


def csrf_matches(expected: str | None, given: str | None) -> bool:
    return bool(expected and given and hmac.compare_digest(expected, given))
