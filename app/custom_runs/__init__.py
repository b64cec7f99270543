"""Custom runs: a user's own input file, the reference output for it, optionally a comparison.

- `quota`: a slot and its disk reserved before a byte of the upload is read;
- `stream`: the upload read from the request's stream into its own files, each cut at its size;
- `runs`: a run's life: stored, sent, recorded, shown, expired.

They are sent by app/submissions/dispatch.py on queues of their own. The API and the pages of the
same resource: app/api/custom_runs.py, app/pages/custom_runs.py.
"""
