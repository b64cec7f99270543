"""A wrong password costs one argon2 check whatever the account: unknown
names, accounts without a password and disabled ones used to answer at once (20 ms against
340 ms), telling an attacker which accounts have a password. bench/login_timing.py has the
times; here the check itself is counted."""

from __future__ import annotations

from typing import Any

import pytest
from argon2 import PasswordHasher
from sqlalchemy import update

from app.accounts import users
from app.core import security
from app.db.models import User


class CountingHasher(PasswordHasher):
    """The real hasher, counting its checks."""

    def __init__(self) -> None:
        super().__init__()
        self.checks = 0

    def verify(self, hash: str | bytes, password: str | bytes) -> Any:  # noqa: A002
        self.checks += 1
        return super().verify(hash, password)


@pytest.fixture
def hasher(monkeypatch: pytest.MonkeyPatch) -> CountingHasher:
    counting = CountingHasher()
    monkeypatch.setattr(security, "_hasher", counting)
    return counting


@pytest.mark.parametrize("username", ["alice", "nobody", "carol", "dave"])
def test_every_wrong_password_costs_one_password_check(client, db, student, hasher, username):
    """alice has a password, nobody does not exist, carol has only a sign-in link, dave is
    disabled."""
    users.add_user(db, "carol", "student", None)
    users.add_user(db, "dave", "student", "dave's long passphrase")
    db.execute(update(User).where(User.username == "dave").values(active=False))
    db.commit()
    hasher.checks = 0
    response = client.post("/api/auth/token", data={"username": username, "password": "guess1"})
    assert response.status_code == 401 and response.json()["detail"] == \
        "wrong username or password"
    assert hasher.checks == 1
