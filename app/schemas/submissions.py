"""Response shapes of /api/submissions that the upload path owns."""

from __future__ import annotations

from pydantic import BaseModel


class Created(BaseModel):
    """A submission accepted for judging."""

    id: int  # watch it at /api/submissions/{id} (and /events)


class UploadLimits(BaseModel):
    """What the server accepts, so clients refuse a too-large file before sending it."""

    max_source_bytes: int  # per source file
    max_files: int  # per submission
    max_request_bytes: int  # the whole multipart body
