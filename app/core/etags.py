"""Conditional GETs: strong ETags from the bytes served, If-None-Match answered with 304, and
gzip for clients that accept it.

Used where the service serves bytes it keeps in memory (the scoreboard): a client that already
has them is told so in a few bytes instead of being sent them again, and one that has not gets
them compressed once per version rather than once per request.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from fastapi import Request, Response

REVALIDATE = "private, no-cache"  # a browser may keep it, but asks (If-None-Match) before use
GZIP_SUFFIX = "-gz"  # the gzip representation's ETag: the identity one's, marked


def etag_of(body: bytes) -> str:
    """A strong ETag: the bytes' digest (equal bytes, equal tag, in every process)."""
    return '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'


def gzip_etag(etag: str) -> str:
    return etag[:-1] + GZIP_SUFFIX + '"'


def matches(if_none_match: str | None, etag: str) -> bool:
    """Whether an If-None-Match header names `etag` in either encoding (the weak comparison
    RFC 9110 asks for there: the same content, compressed or not)."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    mine = {etag, gzip_etag(etag)}
    return any(tag.strip().removeprefix("W/") in mine for tag in if_none_match.split(","))


def accepts_gzip(request: Request) -> bool:
    for coding in request.headers.get("accept-encoding", "").split(","):
        name, _, params = coding.strip().partition(";")
        if name.strip().lower() in ("gzip", "*"):
            return params.replace(" ", "").lower() not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def conditional(request: Request, etag: str, media_type: str, body: Callable[[], bytes],
                gzipped: Callable[[], bytes] | None = None,
                headers: dict[str, str] | None = None) -> Response:
    """304 with no body when the client already has `etag`, else the bytes (gzip when the
    client takes it and `gzipped` makes it); bodies are made only when sent."""
    gzip = gzipped is not None and accepts_gzip(request)
    sent = {"ETag": gzip_etag(etag) if gzip else etag, "Cache-Control": REVALIDATE,
            "Vary": "Accept-Encoding", **(headers or {})}
    if matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=sent)
    if gzip and gzipped is not None:
        return Response(gzipped(), media_type=media_type,
                        headers={**sent, "Content-Encoding": "gzip"})
    return Response(body(), media_type=media_type, headers=sent)
