"""Shapes of /api/announcements."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class AnnouncementIn(BaseModel):
    """What a TA posts."""

    title: str = Field(description="one line, at most 200 characters")
    body: str = Field("", description="plain text, at most 4000 characters; links are linked")
    expires_at: str = Field("", description="ISO 8601; without an offset in the course's time "
                                            "zone; empty: until withdrawn")


class AnnouncementOut(BaseModel):
    """One announcement as everyone reads it."""

    id: int
    title: str
    body: str = Field(description="plain text")
    created_at: datetime = Field(description="UTC")
    expires_at: datetime | None = Field(description="UTC; null: until withdrawn")
    author: str = Field(description="the TA's display name")
