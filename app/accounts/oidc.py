"""Who a verified ID token stands for: the roster's user whose e-mail or username equals the
configured claim. Nobody is created here: a person the IdP knows but the course does not gets a
refusal that says what to do, and the TAs find the attempt in the audit log.

The protocol (discovery, PKCE, state, nonce, the token's signature) is app/web/oidc_client.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.config import Settings
from app.core.errors import UserError
from app.db.models import User

NOT_ON_ROSTER = "you are not on this course's roster; ask your TA"


def claim_value(claims: Mapping[str, Any], settings: Settings) -> str:
    """The matched claim of a verified ID token, refused when absent or (e-mail) unverified."""
    name = settings.oidc_match_claim
    value = claims.get(name)
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"your university account did not send its {name} (the judge matches "
                        f"the roster by it); ask your TA", status=403, field=name)
    if name == "email" and claims.get("email_verified") is False:
        raise UserError("your university account's e-mail address is not verified; verify it "
                        "there, or ask your TA", status=403, field=name)
    return value.strip()


def roster_user(db: Session, claims: Mapping[str, Any], settings: Settings) -> User:
    """The active roster user the claims name; refusals are audited (committed by the caller)."""
    value = claim_value(claims, settings)
    found = _candidates(db, settings.oidc_match_claim, value)
    if len(found) == 1 and found[0].active:
        return found[0]
    why = "ambiguous" if len(found) > 1 else "inactive" if found else "not on the roster"
    audit.record(db, None, "oidc-refused", f"{settings.oidc_match_claim} {value}"[:200],
                 why=why, subject=str(claims.get("sub", ""))[:200])
    if len(found) > 1:
        raise UserError(f"several roster entries have the e-mail {value}; ask your TA to give "
                        "each its own", status=403, field="email")
    raise UserError(NOT_ON_ROSTER, status=403, field=settings.oidc_match_claim)


def _candidates(db: Session, claim: str, value: str) -> list[User]:
    """Users whose e-mail (case-insensitive) or username is `value` (never empty), two at most."""
    where = (func.lower(User.email) == value.lower() if claim == "email"
             else User.username == value)
    return list(db.scalars(select(User).where(where).limit(2)))
