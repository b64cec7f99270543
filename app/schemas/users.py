"""Response shapes of the TA's user management (/api/admin/users)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class UserRow(BaseModel):
    """One person on the roster."""

    username: str
    display_name: str
    email: str
    role: str  # student | ta
    has_password: bool  # False: they can only get in through a sign-in link
    sessions: int  # live browser sessions
    tokens: int  # live tokens


class SignInLinkOut(BaseModel):
    """A one-time link, shown once: send it to its user."""

    username: str
    email: str
    link: str  # full URL; works once, until expires_at
    purpose: str  # invite | reset
    expires_at: datetime  # UTC


class CreatedUser(BaseModel):
    """A new user and the link to get in (None when a password was given)."""

    username: str
    role: str
    link: SignInLinkOut | None


class ImportResult(BaseModel):
    """What a roster import did, and a link for everyone still without a password."""

    created: list[str]
    updated: list[str]
    links: list[SignInLinkOut]


class SignedOut(BaseModel):
    """Every session and token of the user has ended."""

    username: str
    signed_out: bool = True
