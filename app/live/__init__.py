"""Live updates without a database connection per watcher: the change feed and its fan-out."""
