"""One gate for what a client can put in a request: path ids and text fields.

PostgreSQL answers an integer beyond 2^31-1 or a NUL inside a string with an exception, which would
become a 500 wherever a route forgot to check. `validate_request` runs before every route (an
app-wide dependency): an integer path parameter outside 1..2^31-1 is a 404, and every path, query
and form text is bounded and free of control characters (422 naming the field). Column-specific
lengths (a username's 64, a display name's 200) are the services' `check_text` calls.
"""

from __future__ import annotations

import re

from fastapi import Request, params
from fastapi.routing import APIRoute
from starlette.datastructures import UploadFile

from app.core.errors import UserError, not_found

MAX_ID = 2**31 - 1  # PostgreSQL's INTEGER: every id column
MAX_TEXT = 10_000  # any one form or query field; real fields are far shorter
MAX_PATH_TEXT = 200  # a text path parameter (a username, a file name)
_SINGLE_LINE_BAD = re.compile(r"[\x00-\x1f\x7f]")
_MULTILINE_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # tab, CR and LF allowed


def check_text(field: str, value: str, max_length: int, *, multiline: bool = False) -> str:
    """`value` if it fits `max_length` and has no control characters (NUL included)."""
    if len(value) > max_length:
        raise UserError(f"{field}: at most {max_length} characters (got {len(value)})",
                        field=field)
    bad = (_MULTILINE_BAD if multiline else _SINGLE_LINE_BAD).search(value)
    if bad:
        raise UserError(f"{field}: control character {bad.group()!r} is not allowed",
                        field=field)
    return value


def check_id(name: str, raw: str) -> int:
    """A path id as the database can hold it; anything else names no row, hence 404."""
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 10) or not 1 <= int(raw) <= MAX_ID:
        raise not_found(name.removesuffix("_id").replace("_", " ") or "item")
    return int(raw)


def int_path_params(route: APIRoute) -> frozenset[str]:
    """Names of the route's path parameters declared `int` (its dependencies' too); a walk of
    a dozen nodes, cheaper than any cache keyed on unhashable routes."""
    names: set[str] = set()
    pending = [route.dependant]
    while pending:
        dependant = pending.pop()
        names |= {f.alias for f in dependant.path_params if f.field_info.annotation is int}
        pending.extend(dependant.dependencies)
    return frozenset(names)


async def validate_request(request: Request) -> None:
    """The app-wide dependency: ids, then path, query and form texts, before any route runs."""
    route = request.scope.get("route")
    ids = int_path_params(route) if isinstance(route, APIRoute) else frozenset()
    for name, raw in request.path_params.items():
        if name in ids:
            check_id(name, raw)
        else:
            check_text(name, raw, MAX_PATH_TEXT)
    for name, value in request.query_params.multi_items():
        check_text("query", name, 100)
        check_text(name, value, MAX_TEXT)
    if isinstance(route, APIRoute) and route.body_field is not None \
            and isinstance(route.body_field.field_info, params.Form):
        await check_form(request)


async def check_form(request: Request) -> None:
    """Form texts and upload file names (FastAPI has already parsed the form: this is cached)."""
    if not request.headers.get("content-type", "").startswith(
            ("multipart/form-data", "application/x-www-form-urlencoded")):
        return
    for name, value in (await request.form()).multi_items():
        check_text("form", name, 100)
        if isinstance(value, UploadFile):
            check_text(name, value.filename or "", 255)
        else:
            check_text(name, value, MAX_TEXT, multiline=True)
