"""Every route of the app as (method, path with its parameters filled), for the tests that walk
them all: a route added tomorrow is walked without being named anywhere."""

from __future__ import annotations

import re

from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts

_PARAM = re.compile(r"\{[^}:]+(:[^}]+)?\}")


def walk(app: FastAPI, methods: set[str], fill: str = "1") -> list[tuple[str, str]]:
    """(method, path) of each API route and page answering one of `methods`, each path
    parameter replaced by `fill`."""
    found = []
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, APIRoute) and context.path and context.methods:
            path = _PARAM.sub(fill, context.path)
            found += [(method, path) for method in sorted(set(context.methods) & methods)]
    return found
