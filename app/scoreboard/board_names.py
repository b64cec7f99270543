"""A student's choice of how the public board shows them: an alias, or not at all.

An alias is checked before it is kept, each refusal a message the student can act on:
- 3 to 24 characters, letters, digits, spaces and . _ - only, so no HTML or control characters
  can reach a page, a CSV cell or a spreadsheet formula (= + @ lead none);
- its letters of one script (app/core/confusables.py): no Latin "Bob" with a Cyrillic "о";
- not another user's username, display name or alias, nor confusable with one (the same
  skeleton: case, compatibility forms, spaces and punctuation ignored, Cyrillic and Greek
  look-alikes read as the Latin letters they imitate): nobody can pass as someone else, and two
  rows never share a name.
An empty alias clears it. The standing picks the change up through its session hooks (the
user's board fields are watched), so every board shows it from the next version on.
"""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core import confusables
from app.core.errors import UserError
from app.db.models import User

MIN_ALIAS, MAX_ALIAS = 3, 24
ALLOWED = re.compile(r"[\w .\-]+")  # \w: letters and digits of any script, and _


def check_shape(alias: str) -> None:
    if not MIN_ALIAS <= len(alias) <= MAX_ALIAS:
        raise UserError(f"alias: {MIN_ALIAS} to {MAX_ALIAS} characters, not {len(alias)}",
                        field="alias")
    if not ALLOWED.fullmatch(alias) or not any(c.isalnum() for c in alias):
        raise UserError("alias: use letters, digits, spaces and . _ - only (no HTML or "
                        "symbols), with at least one letter or digit", field="alias")
    if not confusables.single_script(alias):
        raise UserError(f"alias: write it in one script, not a mix of "
                        f"{', '.join(sorted(confusables.scripts(alias))).lower()} letters "
                        "(mixed, a name can pass for someone else's)", field="alias")


def check_unique(db: Session, user: User, alias: str) -> None:
    """Refuse an alias that reads as another user's username, display name or alias."""
    mine = confusables.skeleton(alias)
    others = db.execute(select(User.username, User.display_name, User.board_alias)
                        .where(User.id != user.id))
    for username, display_name, taken in others:
        names = {confusables.skeleton(n) for n in (username, display_name or "", taken or "")}
        if mine in names - {""}:
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
