"""The audit log of TA actions."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from app.db.models import AuditLog, User


def record(
    db: Session, actor: User | None, action: str, target: str = "", **detail: Any
) -> None:
    """Add one audit row (committed with the action it describes)."""
    db.add(
        AuditLog(actor_id=actor.id if actor else None, action=action, target=target, detail=detail)
    )
