"""SVG charts: pure functions from plain numbers to SVG text. No JavaScript, no front-end build,
nothing of the database or the worker; every label is escaped.

- `submission`: a submission page's roofline and each test's time against its limit (and the
  frame, scales and text the other two draw with);
- `errormap`: a WA test's error map;
- `history`: a student's best-so-far total time over time.
"""
