"""The front door for request bodies (an ASGI middleware, inside the session cookies).

An upload route's caller is authenticated from the headers alone (bearer token or session
cookie) BEFORE a byte of the body is read, so nobody unknown can make us spool anything. Then
the body's bytes are counted as they stream, whatever Content-Length says (or with none, chunked):
at the limit the rest is read and dropped (up to `upload_drain_bytes`) and a 413 with a JSON
message goes out, which a client still sending can read instead of a connection reset. A body
that stops coming, or dribbles, gets a 408 and its connection closed (app/web/slow_bodies.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.accounts import sessions
from app.accounts.tokens import user_for_token
from app.core.config import Settings
from app.core.errors import UserError
from app.db.session import session_factory
from app.web.slow_bodies import BodyClock, receive_timed
from flashjudge.contract import MAX_FILE_BYTES, MAX_FILES

ROSTER_BYTES = 5 << 20  # a roster CSV: thousands of students fit in far less
MULTIPART_SLACK = 64 << 10  # part headers and boundaries around the files


@dataclass(frozen=True)
class BodyRule:
    """How much body a request may carry, and whether only a logged-in user may send one."""

    limit: int  # bytes of body, counted as they arrive
    needs_login: bool  # authenticate from the headers before reading anything
    what: str  # said in the 413, so the user knows which limit it was
    field: str | None = None  # the form field the 413 names


def upload_rules(settings: Settings) -> dict[str, BodyRule]:
    """POST paths that take files, with their limits."""
    sources = BodyRule(MAX_FILES * MAX_FILE_BYTES + MULTIPART_SLACK, True,
                       f"at most {MAX_FILES} source files of at most {MAX_FILE_BYTES} bytes each",
                       "files")
    roster = BodyRule(ROSTER_BYTES + MULTIPART_SLACK, True,
                      f"a roster CSV of at most {ROSTER_BYTES} bytes", "roster")
    return {"/api/submissions": sources, "/admin/users/import": roster,
            "/api/admin/users/import": roster,
            "/api/custom-runs": BodyRule(custom_run_bytes(settings), True,
                                         f"an input file of at most {settings.max_input_bytes}"
                                         f" bytes and your output for it", "input")}


def custom_run_bytes(settings: Settings) -> int:
    """A custom run's body: an input, an output of a third of its size, and the form around."""
    return settings.max_input_bytes + settings.max_input_bytes // 3 + MULTIPART_SLACK


def rule_for(scope: Scope, settings: Settings, uploads: dict[str, BodyRule]) -> BodyRule:
    path = scope["path"].rstrip("/") or "/"
    if scope["method"] == "POST" and path in uploads:
        return uploads[path]
    return BodyRule(settings.max_request_bytes, False,
                    f"a request body of at most {settings.max_request_bytes} bytes")


def refusal_for(scope: Scope, settings: Settings) -> UserError | None:
    """Why this caller may not upload (None: they may), from the headers and the database."""
    authorization = Headers(scope=scope).get("authorization", "")
    with session_factory(settings.db_url)() as db:
        if authorization[:7].lower() == "bearer ":
            try:
                user_for_token(db, authorization[7:].strip())
            except UserError as exc:
                return exc
            return None
        sid = scope.get("session", {}).get("sid")
        found = sessions.lookup(db, sid) if isinstance(sid, str) else None
        if found and found.user and found.user.active and not found.expired:
            return None
    return UserError("log in first", status=401)


class BodyGuard:
    """Authenticate uploads before their body; count every body's bytes; answer readable 4xx."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.uploads = upload_rules(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        rule = rule_for(scope, self.settings, self.uploads)
        refusal = await run_in_threadpool(refusal_for, scope, self.settings) \
            if rule.needs_login else None
        length = Headers(scope=scope).get("content-length", "")
        if refusal is None and length.isdigit() and int(length) > rule.limit:
            refusal = too_large(rule)
        if refusal is not None:
            await self.answer(scope, receive, send, refusal)
            return
        await Counted(self, scope, receive, send, rule).run()

    async def answer(self, scope: Scope, receive: Receive, send: Send,
                     error: UserError) -> None:
        """Read and drop the rest of the body (bounded), then send the error as JSON."""
        if Headers(scope=scope).get("expect", "").lower() != "100-continue":
            await drain(receive, self.settings.upload_drain_bytes, BodyClock.of(self.settings))
        await send_error(send, error)


class Counted:
    """One request passed on with its body counted; over the limit, the inner app sees the
    client go away and its own answer (if any) is dropped in favour of the 413."""

    def __init__(self, guard: BodyGuard, scope: Scope, receive: Receive, send: Send,
                 rule: BodyRule) -> None:
        self.guard, self.scope, self.outer_receive, self.outer_send = guard, scope, receive, send
        self.rule = rule
        self.clock = BodyClock.of(guard.settings)  # a dribbling body gets a 408 (slow_bodies)
        self.seen = 0  # body bytes so far
        self.answered = False  # the 413 went out; the inner app's messages are dropped
        self.started = False  # the inner app began its own response (then no 413 can follow)

    async def run(self) -> None:
        try:
            await self.guard.app(self.scope, self.receive, self.send)
        except Exception:
            if not self.answered:  # its own failure: the outer layers report it
                raise

    async def receive(self) -> Message:
        if self.answered:
            return {"type": "http.disconnect"}
        try:
            message = await receive_timed(self.outer_receive, self.clock)
        except UserError as slow:
            return await self.refuse(slow)
        if message["type"] == "http.request":
            self.seen += len(message.get("body", b""))
            if self.seen > self.rule.limit:
                if message.get("more_body", False):
                    await drain(self.outer_receive, self.guard.settings.upload_drain_bytes,
                                self.clock)
                return await self.refuse(too_large(self.rule))
        return message

    async def refuse(self, error: UserError) -> Message:
        """Answer `error` (unless the app began its own answer); the app sees a disconnect."""
        if not self.started:
            await send_error(self.outer_send, error)
        self.answered = True
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if not self.answered:
            self.started = True
            await self.outer_send(message)


def too_large(rule: BodyRule) -> UserError:
    return UserError(f"request too large: at most {rule.limit} bytes ({rule.what})",
                     status=413, field=rule.field)


async def drain(receive: Receive, budget: int, clock: BodyClock) -> None:
    """Read and discard body messages until the body ends, `budget` bytes were dropped, or the
    client is too slow to wait for."""
    dropped = 0
    while dropped <= budget:
        try:
            message = await receive_timed(receive, clock)
        except UserError:
            return
        if message["type"] != "http.request" or not message.get("more_body", False):
            return
        dropped += len(message.get("body", b""))


async def send_error(send: Send, error: UserError) -> None:
    body = json.dumps({"detail": error.detail, "field": error.field}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in error.headers.items()]
    if error.status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
