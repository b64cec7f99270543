"""/docs shows real schemas: every JSON answer of the API is a named response model."""

from __future__ import annotations

from typing import Any

from app.core.config import Settings
from app.main import create_app

NOT_JSON = ("/events", ".csv", "/output", "/report", "/files/", "/metrics")  # streams and files


def named(schema: dict[str, Any]) -> bool:
    """A $ref to a model, or a list of them (not a bare dict or an empty schema)."""
    if "$ref" in schema:
        return True
    return schema.get("type") == "array" and "$ref" in schema.get("items", {})


def test_every_json_route_declares_a_response_model(tmp_path) -> None:
    settings = Settings(environment="test", data_dir=tmp_path, migrate_on_start=False,
                        sweep_interval_s=0)
    paths = create_app(settings).openapi()["paths"]
    untyped = []
    for path, operations in paths.items():
        if any(part in path for part in NOT_JSON):
            continue
        for method, operation in operations.items():
            answers = operation.get("responses", {})
            if "204" in answers:  # no content: nothing to describe
                continue
            ok: dict[str, Any] = next(
                (answers[c] for c in ("200", "201", "202") if c in answers), {})
            schema = ok.get("content", {}).get("application/json", {}).get("schema", {})
            if not named(schema):
                untyped.append(f"{method.upper()} {path}")
    assert untyped == []
