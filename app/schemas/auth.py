"""Response shapes of /api/auth: tokens, who I am, a password change."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class AccessToken(BaseModel):
    """OAuth2 password flow answer (also a new personal token, with its details)."""

    access_token: str  # the bearer token: shown once, only its hash is kept
    token_type: str = "bearer"


class NewToken(AccessToken):
    """A personal token just made."""

    id: int  # for revoking it later
    name: str  # the owner's label for it
    expires_at: datetime  # UTC


class TokenInfo(BaseModel):
    """A token as its owner (or a TA) sees it later: never the secret."""

    id: int
    name: str
    kind: str  # personal | login (password flow)
    created_at: datetime  # UTC
    last_used_at: datetime | None  # UTC, to within a minute; None: never used
    expires_at: datetime | None  # UTC


class Me(BaseModel):
    """Who a token or session belongs to."""

    username: str
    display_name: str
    role: str  # student | ta


class PasswordChanged(BaseModel):
    """After a password change every session and token of the user has ended."""

    sessions_ended: bool = True
    tokens_revoked: bool = True
    detail: str = "password changed; log in again everywhere with the new one"
