"""The module Celery's command line loads for the control worker
(`celery -A app.control.entry worker -Q control`).

The one module of app/ whose import builds something: Celery's CLI finds an app as a module
attribute, so this module exists only to hold it, with the control tasks registered on it, and
it is where the control worker starts: its sessions get the change feed's and the standing's
listeners here (app/wiring.py). Nothing else imports it.
"""

from app.control import tasks
from app.core.config import get_settings
from app.submissions.dispatch import control_app
from app.wiring import wired_sessions
from flashjudge.celery_logging import quiet_celery_logs

app = control_app()
tasks.register(app)
wired_sessions(get_settings().db_url)  # every result it records moves live pages and the board
quiet_celery_logs()  # heartbeats at DEBUG, no task arguments in the log
