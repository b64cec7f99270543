"""No 5xx for anything a client sends: every route walked with hostile ids and texts, and the
red team's cases (NUL in a username or token name, ids beyond 2^31, long roster fields)."""

from __future__ import annotations

import copy
import importlib
import pkgutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import quote

import pytest
from fastapi import APIRouter, FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from app import pages
from app.main import create_app

HOSTILE_IDS = ["0", "-1", "2147483648", "99999999999999999999", "1e3", "%00", "abc", "%F0%9F"]
HOSTILE_TEXT = ["a\x00b", "x" * 201, "x" * 20_000, "\x1b[31m", "é" * 300, "../../etc"]
NOT_READY = ("/readyz", 503)  # no worker in a test: the truth, not a failure
# An open event stream never ends, and TestClient reads a body to its end: streams are walked over
# a real server in tests/app/api/test_live_streams.py (404 / 401 before anything streams).
ENDLESS = {"/api/scoreboard/events"}
HOSTILE_NUMBERS = ["2147483648", "-1", "99999999999999999999", "a\x00"]
# httpx (TestClient's transport) refuses a URL over 64 KiB, as browsers and servers refuse one well
# before: a route with many query parameters (the audit log's seven) gets a long text in one
# parameter at a time once they would pass half of that.
MAX_QUERY = 32_768


@dataclass
class Operation:
    """One method of one path, read from an OpenAPI document."""

    path: str  # e.g. /api/submissions/{submission_id}
    method: str  # GET, POST, ...
    int_path: set[str] = field(default_factory=set)  # integer path parameters
    text_path: set[str] = field(default_factory=set)  # other path parameters
    queries: set[str] = field(default_factory=set)  # query parameter names
    forms: dict[str, str] = field(default_factory=dict)  # field -> "int" | "text" | "file"


def field_kind(prop: dict) -> str:
    """int, file or text, from a form field's JSON schema (anyOf for optional ones)."""
    options = prop.get("anyOf", [prop])
    text = str(options)
    if "binary" in text or "contentMediaType" in text:
        return "file"
    return "int" if any(o.get("type") == "integer" for o in options) else "text"


def operations(document: dict) -> Iterator[Operation]:
    schemas = document.get("components", {}).get("schemas", {})
    for path, ops in document["paths"].items():
        for method, op in ops.items():
            found = Operation(path, method.upper())
            for param in op.get("parameters", []):
                if param["in"] == "path":
                    integer = field_kind(param["schema"]) == "int"
                    (found.int_path if integer else found.text_path).add(param["name"])
                elif param["in"] == "query":
                    found.queries.add(param["name"])
            for content in op.get("requestBody", {}).get("content", {}).values():
                ref = content["schema"].get("$ref", "").rsplit("/", 1)[-1]
                for name, prop in schemas.get(ref, {}).get("properties", {}).items():
                    found.forms[name] = field_kind(prop)
            yield found


def page_routers() -> Iterator[APIRouter]:
    """The router of every module under app/pages: a page added there is walked without being
    named here."""
    for module in pkgutil.iter_modules(pages.__path__):
        router = getattr(importlib.import_module(f"app.pages.{module.name}"), "router", None)
        if isinstance(router, APIRouter):
            yield router


def every_route_document(client: TestClient) -> dict:
    """The app's OpenAPI document plus the pages (which /docs leaves out), built the same way."""
    document = client.get("/openapi.json").json()
    hidden = []
    for router in page_routers():
        for route in router.routes:
            if isinstance(route, APIRoute):
                shown = copy.copy(route)
                shown.include_in_schema = True
                hidden.append(shown)
    pages = get_openapi(title="pages", version="0", routes=hidden)
    document["paths"] = {**pages["paths"], **document["paths"]}
    document.setdefault("components", {}).setdefault("schemas", {}).update(
        pages.get("components", {}).get("schemas", {}))
    return document


def fill(path: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        path = path.replace("{" + name + "}", value)
    return path


def requests_for(op: Operation) -> Iterator[tuple[str, dict, dict]]:
    """(url, form data, files) cases: hostile ids, hostile path texts, hostile fields."""
    plain = {**{n: "1" for n in op.int_path}, **{n: "nobody" for n in op.text_path}}
    for name in op.int_path:
        for bad in HOSTILE_IDS:
            yield fill(op.path, {**plain, name: bad}), {}, {}
    for name in op.text_path:
        for bad in HOSTILE_TEXT[:4]:
            yield fill(op.path, {**plain, name: quote(bad, safe="")}), {}, {}
    for bad_text, bad_number in zip(HOSTILE_TEXT, HOSTILE_NUMBERS * 2, strict=False):
        data = {n: bad_number if kind == "int" else bad_text
                for n, kind in op.forms.items() if kind != "file"}
        files = {n: ("hw4.c", b"int main(void){return 0;}\n")
                 for n, kind in op.forms.items() if kind == "file"}
        for query in query_strings(sorted(op.queries), bad_text):
            yield fill(op.path, plain) + (f"?{query}" if query else ""), data, files


def query_strings(names: list[str], text: str) -> list[str]:
    """Every parameter set to `text` in one query string; one string per parameter when together
    they would be longer than a client sends (MAX_QUERY)."""
    pairs = [f"{name}={quote(text)}" for name in names]
    together = "&".join(pairs)
    return [together] if len(together) <= MAX_QUERY else pairs


def walk(app: FastAPI, headers: dict[str, str]) -> tuple[list[str], int]:
    """Every operation, every case; the 5xx answers found and the number of requests."""
    failures, sent = [], 0
    with TestClient(app, raise_server_exceptions=False) as client:
        for op in operations(every_route_document(client)):
            if op.path in ENDLESS:
                continue
            for url, data, files in requests_for(op):
                response = client.request(op.method, url, data=data or None,
                                          files=files or None, headers=headers)
                sent += 1
                if response.status_code >= 500 and (op.path, response.status_code) != NOT_READY:
                    failures.append(f"{op.method} {url[:120]} {list(data)}: "
                                    f"{response.status_code} {response.text[:200]}")
    return failures, sent


@pytest.mark.parametrize("who", ["ta", "nobody"])
def test_no_route_answers_hostile_input_with_a_5xx(settings, request, who):
    headers = request.getfixturevalue(who).headers if who != "nobody" else {}
    failures, sent = walk(create_app(settings), headers)
    print(f"hostile walk as {who}: {sent} requests, {len(failures)} answered 5xx")
    assert sent > 500 and failures == []


def test_ids_beyond_the_database_integer_are_not_found(client, student):
    for path in ("/api/submissions/2147483648", "/api/submissions/99999999999999999999",
                 "/api/custom-runs/2147483648", "/api/submissions/0/profiles"):
        response = client.get(path, headers=student.headers)
        assert response.status_code == 404 and response.json()["detail"].startswith("no such")


def test_a_nul_in_a_username_or_token_name_is_a_422_naming_the_field(client, student):
    response = client.post("/api/auth/token", data={"username": "al\x00ice", "password": "x"})
    assert response.status_code == 422 and response.json()["field"] == "username"
    page = client.post("/login", data={"username": "\x00", "password": "x"},
                       headers={"Accept": "text/html"})
    assert page.status_code == 422 and "control character" in page.text
    response = client.post("/api/auth/tokens", data={"name": "lap\x00top"},
                           headers=student.headers)
    assert response.status_code == 422 and response.json()["field"] == "name"


@pytest.mark.parametrize("row, message", [
    ("s1," + "D" * 201 + ",s1@x.edu,student", "roster row 1: display_name: at most 200"),
    ("s1,One,s1\x00@x.edu,student", "roster row 1: email: control character"),
    ("s1,One," + "e" * 300 + ",student", "roster row 1: email: at most 200"),
    ("s1,One,s1@x.edu," + "t" * 300, "roster row 1: role"),
    ("s1," + "x" * 200_000 + ",a,student", "the roster is not a readable CSV"),
])
def test_roster_fields_are_checked_before_anything_is_stored(client, ta, row, message):
    response = client.post("/api/admin/users/import", headers=ta.headers,
                           files={"roster": ("roster.csv", row.encode())})
    assert response.status_code == 422 and response.json()["detail"].startswith(message)
    users = client.get("/api/admin/users", headers=ta.headers).json()
    assert [u["username"] for u in users] == ["tara"]
