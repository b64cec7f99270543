"""Similarity for TAs: which submissions of an assignment share code, and where.

`engine/` is the pure library (no database, no I/O: MOSS's method, its opening comment says
how). The modules here put it on the service: `fingerprinting` (each stored submission's
fingerprints, computed by the control worker), `suite_index` (the index per suite, rebuilt from
stored fingerprints), `sources` (public and base code a TA uploads), `candidates` (the pairs
worth a look) and `view` (what the TAs' page shows of a pair).
"""
