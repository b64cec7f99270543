"""The one error of the similarity engine: a message naming the offending field."""

from __future__ import annotations


class SimilarityError(ValueError):
    """Bad input to the engine (unknown kind, duplicate or unknown document, corrupt stored
    fingerprints); `field` names what to fix, as UserError does for the service."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
