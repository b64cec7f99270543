"""The module Celery's command line loads for the control worker
(`celery -A app.control.entry worker -Q control`).

The one module of app/ whose import builds something: Celery's CLI finds an app as a module
attribute, so this module exists only to hold it, with the control tasks registered on it.
Nothing else imports it.
"""

from app.control import tasks
from app.judging.dispatch import control_app
from flashjudge.celery_logging import quiet_celery_logs

app = control_app()
tasks.register(app)
quiet_celery_logs()  # heartbeats at DEBUG, no task arguments in the log
