"""Pydantic response and request models, one module per resource, so /docs shows every shape."""
