"""The course's rules: what the boards, similarity, the pages and the CLI read of an assignment.

- `assignments`: which assignment an upload goes to (the one named, or the only open one), the
  boards a viewer may pick, and the default one a fresh course makes from FLASHJUDGE_SUITE;
- `assignment_config`: an assignment's configuration checked, applied, exported and imported;
- `terms`: archive a term (`require_writable` guards every write about its assignments and
  submissions) and start the next one;
- `deadlines`: a due time per assignment, its late policy, per-student extensions;
- `visibility`: what a student sees of a result before the due time.

These rules stand below a submission's life (app/submissions/), which reads them and is never
read by them. The TA's pages and API for them: app/pages/ta/course_admin.py and
app/api/course_admin.py.
"""
