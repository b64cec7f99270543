"""The module Celery's command line loads (`celery -A worker.celery_adapter.entry worker ...`).

The one module of worker/ whose import builds something: Celery's CLI finds an app as a module
attribute, so this module exists only to hold it. Nothing else imports it.
"""

from worker.celery_adapter.app import celery_app

app = celery_app()
