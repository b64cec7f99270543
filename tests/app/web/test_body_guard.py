"""The front door for bodies: uploads are authenticated before their body is read, bodies are
counted whatever Content-Length says, and a refused upload gets an answer the client can read."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select
from starlette.types import Message

from app.core.config import Settings
from app.db.models import Submission
from app.main import create_app
from flashjudge.contract import MAX_FILE_BYTES, MAX_FILES
from tests.app.utils.factories import Account
from tests.app.utils.live_server import live_server

CHUNK = 64 << 10


def asgi_post(settings: Settings, path: str, headers: dict[str, str], total: int,
              head: bytes = b"") -> tuple[int, dict, int]:
    """POST `head` then `total` body bytes straight into the ASGI app in 64 KiB messages;
    returns the status, the JSON answer and how many body bytes the app pulled."""
    app = create_app(settings)
    pulled = 0
    sent: list[Message] = []

    async def receive() -> Message:
        nonlocal pulled
        if pulled >= total:
            return {"type": "http.disconnect"}
        chunk = head if pulled == 0 and head else b"x" * CHUNK
        pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": pulled < total}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5000),
             "server": ("testserver", 80),
             "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]}
    asyncio.run(app(scope, receive, send))
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body), pulled


MULTIPART = {"content-type": "multipart/form-data; boundary=XyZ"}


def test_an_unauthenticated_upload_is_refused_after_reading_at_most_the_drain_cap(settings):
    """Before: the whole body was spooled (294 MiB of a 300 MB upload) and then came the 401."""
    capped = settings.model_copy(update={"upload_drain_bytes": 1 << 20})
    status, body, pulled = asgi_post(capped, "/api/submissions",
                                     {**MULTIPART, "transfer-encoding": "chunked"}, 40 << 20)
    assert (status, body["detail"]) == (401, "log in first")
    assert pulled <= (1 << 20) + 2 * CHUNK  # dropped, never parsed nor spooled


def test_a_bad_token_is_refused_before_the_body(settings):
    capped = settings.model_copy(update={"upload_drain_bytes": 0})
    status, body, pulled = asgi_post(capped, "/api/custom-runs",
                                     {**MULTIPART, "authorization": "Bearer fj_forged"}, 8 << 20)
    assert status == 401 and "invalid" in body["detail"] and pulled <= 2 * CHUNK


def test_a_lying_content_length_does_not_stretch_the_limit(settings, db, student: Account):
    limit = MAX_FILES * MAX_FILE_BYTES
    status, body, pulled = asgi_post(settings, "/api/submissions",
                                     {**MULTIPART, "content-length": "100", **student.headers},
                                     limit + (4 << 20), multipart_head("hw4.c"))
    assert status == 413 and body["field"] == "files"
    assert f"at most {MAX_FILE_BYTES} bytes each" in body["detail"]
    assert db.scalar(select(func.count()).select_from(Submission)) == 0


def test_other_requests_are_bounded_too(settings):
    status, body, _ = asgi_post(settings, "/login",
                                {"content-type": "application/x-www-form-urlencoded"}, 4 << 20)
    assert status == 413 and f"at most {settings.max_request_bytes} bytes" in body["detail"]


@pytest.fixture
def server(settings: Settings) -> Iterator[str]:
    with live_server(settings) as url:
        yield url


def multipart_head(name: str) -> bytes:
    return (f'--XyZ\r\nContent-Disposition: form-data; name="language"\r\n\r\nc-program\r\n'
            f'--XyZ\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
            f"Content-Type: text/plain\r\n\r\n").encode()


def post(server: str, headers: dict[str, str], body: bytes | Iterator[bytes]
         ) -> tuple[int, dict]:
    """urllib: sends the whole body (chunked for an iterator) with `Connection: close`, then
    reads the answer, as simple clients do."""
    request = urllib.request.Request(f"{server}/api/submissions", data=body, method="POST",
                                     headers={**MULTIPART, **headers})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_an_oversized_upload_gets_a_413_the_client_reads(server, settings, db, student):
    """Before: the 413 went out before the body was read and the client got a reset."""
    body = multipart_head("hw4.c") + b"/*" + b"x" * (40 << 20) + b"*/\r\n--XyZ--\r\n"
    status, answer = post(server, student.headers, body)
    assert status == 413 and "request too large" in answer["detail"]
    assert db.scalar(select(func.count()).select_from(Submission)) == 0


def test_chunked_uploads_are_counted_and_anonymous_ones_refused_readably(server, settings,
                                                                       student):
    def chunks(total: int) -> Iterator[bytes]:
        yield multipart_head("hw4.c")
        for _ in range(total // CHUNK):
            yield b"x" * CHUNK

    assert post(server, {}, chunks(16 << 20)) == (401, {"detail": "log in first", "field": None})
    status, answer = post(server, student.headers, chunks(16 << 20))
    assert status == 413 and answer["field"] == "files"
