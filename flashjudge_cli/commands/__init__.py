"""Subcommands of the `flashjudge` console script, one module each."""
