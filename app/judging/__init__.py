"""The app's side of a submission's life: intake, dispatch to the workers, recording what they
report, the sweeper, and what TAs do to a submission (docs/architecture.md)."""
