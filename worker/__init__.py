"""The judging pipeline (build, sandboxed run, compare, verdicts) and the Celery adapter.

Never imports the web app."""
