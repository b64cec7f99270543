"""The one rule for trusting what another service says about who someone is.

An identity provider's claim decides which roster account a browser gets, so it is taken only
when it is unambiguous:
- an e-mail counts only when the provider says it is verified with the JSON value `true`: the
  string "false", 0, null or a missing `email_verified` are all "not verified" (a provider that
  lets anyone type an address must not hand out the roster member who owns it);
- a value is compared in one form, NFKC then case-folded, and refused outright when it holds a
  control or format character (NUL, zero-width joiners, bidirectional marks) or when that form
  would change it beyond plain lower-casing: a KELVIN SIGN or a full-width letter folds into the
  ASCII letter it imitates, a German sharp s into "ss", and so would reach someone else's
  account.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from app.core.errors import UserError

FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})  # controls, formats, unassigned


def email_verified(claims: Mapping[str, Any]) -> bool:
    """Whether the claims vouch for their e-mail: `email_verified` is exactly JSON true."""
    return claims.get("email_verified") is True


def folded(value: str) -> str:
    """The form two identities compare in: NFKC, then case-folded."""
    return unicodedata.normalize("NFKC", value).casefold()


def unsafe_reason(value: str) -> str | None:
    """Why `value` cannot be trusted as an identity, or None when it can."""
    for char in value:
        if unicodedata.category(char) in FORBIDDEN_CATEGORIES:
            return f"it holds the control or format character U+{ord(char):04X}"
    if unicodedata.normalize("NFKC", value) != value or folded(value) != value.lower():
        return "it holds characters that stand in for other letters (compatibility forms)"
    return None


def claim_key(field: str, value: str) -> str:
    """`value`'s comparison form; a 403 naming the field when it is not safe to compare."""
    why = unsafe_reason(value)
    if why is not None:
        raise UserError(f"your university account's {field} cannot be matched to the roster: "
                        f"{why}; ask your TA", status=403, field=field)
    return folded(value)


def printable(value: str, limit: int = 200) -> str:
    """`value` for a log line or an audit row: controls escaped (PostgreSQL refuses a NUL)."""
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in FORBIDDEN_CATEGORIES else c
                   for c in value)[:limit]
