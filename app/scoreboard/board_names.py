"""A student's choice of how the public board shows them (issue 23): an alias, or not at all.

An alias is checked before it is kept, each refusal a message the student can act on:
- 3 to 24 characters, letters (any script), digits, spaces and . _ - only, so no HTML or
  control characters can reach a page, a CSV cell or a spreadsheet formula (= + @ lead none);
- not another user's username, display name or alias, compared loosely (case, accents'
  compatibility forms, spaces and punctuation ignored): nobody can pass as someone else, and
  two rows never share a name.
An empty alias clears it. The standing picks the change up through its session hooks (the
user's board fields are watched), so every board shows it from the next version on.
"""

from __future__ import annotations

import re
import unicodedata

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.db.models import User

MIN_ALIAS, MAX_ALIAS = 3, 24
ALLOWED = re.compile(r"[\w .\-]+")  # \w: letters and digits of any script, and _


def loose(name: str) -> str:
    """The form names are compared in: NFKC, case-folded, letters and digits only."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(c for c in folded if c.isalnum())


def check_shape(alias: str) -> None:
    if not MIN_ALIAS <= len(alias) <= MAX_ALIAS:
        raise UserError(f"alias: {MIN_ALIAS} to {MAX_ALIAS} characters, not {len(alias)}",
                        field="alias")
    if not ALLOWED.fullmatch(alias) or not any(c.isalnum() for c in alias):
        raise UserError("alias: use letters, digits, spaces and . _ - only (no HTML or "
                        "symbols), with at least one letter or digit", field="alias")


def check_unique(db: Session, user: User, alias: str) -> None:
    """Refuse an alias that reads as another user's username, display name or alias."""
    mine = loose(alias)
    others = db.execute(select(User.username, User.display_name, User.board_alias)
                        .where(User.id != user.id))
    for username, display_name, taken in others:
        if mine in {loose(username), loose(display_name or ""), loose(taken or "")} - {""}:
            raise UserError("alias: that name belongs to another user (their username, name "
                            "or alias); choose one nobody else goes by", status=409,
                            field="alias")


def clean(alias: str | None) -> str | None:
    """The alias as kept: spaces trimmed and collapsed; None when empty."""
    text = " ".join((alias or "").split())
    return text or None


def set_board_name(db: Session, user: User, alias: str | None, hidden: bool) -> None:
    """Keep `user`'s alias (None or empty: their username) and whether they are hidden from
    the public board; checked first, committed."""
    chosen = clean(alias)
    if chosen is not None:
        check_shape(chosen)
        check_unique(db, user, chosen)
    user.board_alias, user.board_hidden = chosen, hidden
    db.commit()
