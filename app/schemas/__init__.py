"""Response models of the API, one module per resource, named as its router in app/api/ (shown
in /docs)."""
