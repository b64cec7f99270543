"""The app's side of a submission's life (docs/architecture.md, "One submission"):

- accepting: `uploads` (the contract's upload rule and the app's own checks), `capacity` (a live
  worker judges the language), `deadlines` (refused, or marked late), `intake`;
- `lifecycle`: the only writer of a submission's status, attempt and job_key;
- `jobs`: rows to contract messages and back; `dispatch`: sending them (Celery, the ledger);
- `recording` (what workers report), `sweeper` (stuck work), `timing`, `feedback`, `profiles`,
  `custom_runs`;
- what people see and do: `detail`, `history`, `overview`, `ta_actions` (rejudge, cancel).
"""
