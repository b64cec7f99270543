"""The three kinds of documents an index holds."""

SUBMISSION = "submission"  # a student's submission: compared with other students and public sources
PUBLIC = "public"  # a known public source a TA uploaded (e.g. last year's solutions)
BASE = "base"  # starter code (seq-flashattention.c, ...): its fingerprints count for nobody
KINDS = (SUBMISSION, PUBLIC, BASE)
