"""The FastAPI web service."""
