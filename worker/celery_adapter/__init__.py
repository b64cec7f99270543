"""The Celery adapter: the worker's Celery app, the task functions (payload in, result message out)
and the heartbeat. The only part of worker/ that knows Celery exists."""
