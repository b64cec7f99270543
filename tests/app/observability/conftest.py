"""The live-service fixtures (both setups, real workers) for the observability tests."""

from tests.app.observability.live_service import (  # noqa: F401 - fixtures, registered by import
    client,
    live_workers,
    ready_env,
    settings,
)
