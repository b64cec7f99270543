"""Who a verified ID token stands for: the roster's user whose e-mail or username equals the
configured claim. Nobody is created here: a person the IdP knows but the course does not gets a
refusal that says what to do, and the TAs find the attempt in the audit log.

The protocol (discovery, PKCE, state, nonce, the token's signature) is app/web/oidc_client.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import audit, identity
from app.core.config import Settings
from app.core.errors import UserError
from app.db.models import User

NOT_ON_ROSTER = "you are not on this course's roster; ask your TA"


def claim_value(claims: Mapping[str, Any], settings: Settings) -> str:
    """The matched claim of a verified ID token, refused when absent, (e-mail) not verified as
    exactly `true`, or not safe to compare (app/accounts/identity.py)."""
    name = settings.oidc_match_claim
    value = claims.get(name)
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"your university account did not send its {name} (the judge matches "
                        f"the roster by it); ask your TA", status=403, field=name)
    if name == "email" and not identity.email_verified(claims):
        raise UserError("your university account's e-mail address is not verified; verify it "
                        "there, or ask your TA", status=403, field=name)
    identity.claim_key(name, value.strip())
    return value.strip()


def roster_user(db: Session, claims: Mapping[str, Any], settings: Settings) -> User:
    """The active roster user the claims name; refusals are audited (committed by the caller)."""
    name = settings.oidc_match_claim
    try:
        value = claim_value(claims, settings)
    except UserError as exc:
        refuse(db, claims, name, str(claims.get(name, "")), exc.detail)
        raise
    found = _candidates(db, name, value)
    if len(found) == 1 and found[0].active:
        return found[0]
    why = "ambiguous" if len(found) > 1 else "inactive" if found else "not on the roster"
    refuse(db, claims, name, value, why)
    if len(found) > 1:
        raise UserError(f"several roster entries have the e-mail {value}; ask your TA to give "
                        "each its own", status=403, field="email")
    raise UserError(NOT_ON_ROSTER, status=403, field=name)


def refuse(db: Session, claims: Mapping[str, Any], name: str, value: str, why: str) -> None:
    """The audit row of a refused sign-in, for the TAs to find (controls escaped)."""
    subject = identity.printable(str(claims.get("sub", "")))
    audit.record(db, None, "oidc-refused", identity.printable(f"{name} {value}"),
                 why=identity.printable(why), subject=subject)


def _candidates(db: Session, claim: str, value: str) -> list[User]:
    """Users whose e-mail (compared NFKC-case-folded) or username is `value`, two at most."""
    if claim != "email":
        return list(db.scalars(select(User).where(User.username == value).limit(2)))
    key = identity.folded(value)
    rows = db.execute(select(User.id, User.email).where(User.email != ""))
    ids = [uid for uid, email in rows if identity.folded(email) == key][:2]
    return list(db.scalars(select(User).where(User.id.in_(ids)))) if ids else []
