"""The control worker: the Celery tasks on the `control` queue that record what workers report,
next to the database (`tasks`), and the module Celery's command line loads (`entry`)."""
