"""Response models of the API, one module per resource (shown in /docs)."""
