"""The write side of a submission's life on the service (docs/architecture.md, "One submission"):

- accepting: `uploads` (the contract's upload rule and the app's own checks), `capacity` (a live
  worker judges the language), `intake` (the course's deadline, supersede, commit, send);
- `lifecycle`: the only writer of a submission's status, attempt and job_key;
- `jobs`: rows to contract messages and back; `dispatch`: sending them (Celery, the attempt ledger);
- `recording`: what workers report, cleaned by `safe_text` first; `refinement`: asks for the
  refinement of a recorded verdict and records the times it brings back (`record_timing`);
  `feedback` (roofline, flags, the diagnosis) and `floors` (the start-up floor) kept with a
  result; `profiles`: ncu profiles asked for, sent and recorded;
- `ta_actions`: rejudge and cancel, each a transition of `lifecycle`.

What people read of submissions is app/results/; stuck and lost work is app/upkeep/'s; the rules
of the course it obeys are app/course/.
"""
