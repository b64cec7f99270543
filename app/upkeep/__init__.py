"""Upkeep: the threads that keep the broker's queues true to the database, which is the truth.

- `sweeper`: sends stuck submissions and custom runs again or gives them up, expires old custom
  runs, prunes the change feed;
- `broker_watch`: notices messages lost with the broker, sends each again once, and keeps a
  notice for /readyz and the TA page while it lasts.

Started by the app's lifespan (app/main.py); every change they make goes through the owner of the
row (app/submissions/ `recording` and `dispatch`, app/custom_runs/ `runs`).
"""
