"""flashjudge_cli: the `flashjudge` console script, the one layer above both app/ and worker/."""
