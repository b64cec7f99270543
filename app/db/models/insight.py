"""Similarity for TAs: uploaded public or base sources and stored fingerprints."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    DateTime,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, utcnow


class SimilaritySource(Base):
    """A source a TA uploaded for one suite: a public solution (compared with every student) or
    base code (starter code such as seq-flashattention.c: nobody's copy, excluded everywhere)."""

    __tablename__ = "similarity_sources"
    id: Mapped[int] = mapped_column(primary_key=True)
    suite: Mapped[str] = mapped_column(String(64), index=True)
    # the assignment it belongs to (0010; NULL only before an assignment could be named)
    assignment_id: Mapped[int | None] = mapped_column(ForeignKey("assignments.id"),
                                                      nullable=True)
    kind: Mapped[str] = mapped_column(String(16))  # public | base
    name: Mapped[str] = mapped_column(String(200))  # what the TA called it (e.g. the file name)
    content: Mapped[str] = mapped_column(Text)  # the source text
    uploaded_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Fingerprint(Base):
    """The stored fingerprints of one document (app.similarity.to_bytes), computed once on the
    control side, so the page's index is rebuilt without lexing anything again."""

    __tablename__ = "fingerprints"
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int | None] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), unique=True, nullable=True)
    source_id: Mapped[int | None] = mapped_column(
        ForeignKey("similarity_sources.id", ondelete="CASCADE"), unique=True, nullable=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)  # to_bytes() of DocumentFingerprints
    count: Mapped[int] = mapped_column(Integer, default=0)  # fingerprints in `data`
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
