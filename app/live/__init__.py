"""Live updates without a database connection per watcher: one poller per process reads the change
feed (app/changefeed/) and fans each change out to the open streams."""
