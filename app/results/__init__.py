"""The read side: what students and TAs see of submissions, built from the stored rows only.

- `detail`: who may see a submission, its detail (one snapshot for every watcher, cut per viewer
  by app/course/visibility.py), its place in the queue and why it waits;
- `history`: a student's two submissions side by side and the best-so-far over time (drawn by
  app/charts/history.py);
- `overview`: what TAs see of the judging: submissions per status, the live workers, work no
  worker can take, queued messages the broker lost.

Nothing here writes; the write side is app/submissions/. Each is served by the API and the pages
of its resource (app/api/submissions.py and app/pages/submissions.py, .../history.py, and the TA
page, app/api/admin.py and app/pages/ta/admin.py).
"""
