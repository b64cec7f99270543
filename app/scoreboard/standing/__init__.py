"""The standing: every board's rows maintained at write time (app/db/models/standing.py).

- `rules`: which results count and which one is a student's best, used by both ways of
  computing a board (incrementally here, in full in app/scoreboard/rows.py);
- `compute`: the rows some students (or all) should have, from their submissions;
- `maintain`: writing those rows, the version bump and the change note, or a full rebuild;
- `hooks`: the session events that call `maintain` in the transaction of every change that can
  move a row, installed on each process's session factory (app/wiring.py), so no writer can
  forget.
"""
